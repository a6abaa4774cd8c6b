import { join } from 'node:path';
import { app, dialog, session, type BrowserWindow, type Tray } from 'electron';
import { AlertStore } from '../core/alerts/alert-store.js';
import { callNames } from '../core/contract.js';
import { EmbeddedServer } from '../core/embedded-server.js';
import { ConsoleHost } from '../core/host.js';
import { SavedViewStore } from '../core/saved-views/store.js';
import { PreferenceStore } from '../core/preferences.js';
import { alertNotifier } from './alert-notifications.js';
import { handleAppScheme, registerAppScheme } from './app-protocol.js';
import { EMBEDDED_STATUS_CHANNEL } from './channels.js';
import { registerBridge } from './ipc.js';
import { SealedProfileStore, safeStorageBox } from './safe-storage-box.js';
import { applyContentSecurityPolicy, denyAllPermissions } from './security.js';
import { createTray, hideToTray } from './tray.js';
import { embeddedServerSpawner } from './utility-server.js';
import { createConsoleWindow } from './window.js';

/** True when this module is the compiled dist/main/electron/lifecycle.js, false when run from source (tsx, tests). */
const COMPILED = !/\.[cm]?ts$/.test(new URL(import.meta.url).pathname);

/**
 * The Electron shell's lifecycle. Paths are relative to the app's root, app.getAppPath(): the
 * project folder in development, resources/app.asar once packaged. `npm run build` puts there
 * what they name (see scripts/build.ts and electron-builder.yml).
 */
export const paths = {
  renderer: () => join(app.getAppPath(), 'dist', 'renderer'),
  /** The preload bundled into one CommonJS file (esbuild); from source too, as a sandboxed preload cannot run TypeScript. */
  preload: () => join(app.getAppPath(), 'dist', 'main', 'electron', 'preload.cjs'),
  /**
   * Packaged: the compiled server, unpacked from the asar archive (a Node resolving its imports
   * and its analytics worker threads need real files). In development the compiled server in
   * dist/ when this shell is compiled too (`npm start`, `electron .`), else EmbeddedServer's
   * default entry, server/cli.ts through tsx.
   */
  serverEntry: (compiled: boolean = COMPILED) => {
    if (app.isPackaged) {
      return join(app.getAppPath().replace(/\.asar$/, '.asar.unpacked'), 'dist', 'server', 'cli.js');
    }
    return compiled ? join(app.getAppPath(), 'dist', 'server', 'cli.js') : undefined;
  },
};

export function runElectronShell(): void {
  // Before ready: app:// must be a privileged scheme before any session exists.
  registerAppScheme();

  if (!app.requestSingleInstanceLock()) {
    // One console per user: a second launch hands over to the first (see second-instance) and leaves.
    app.quit();
    return;
  }

  let mainWindow: BrowserWindow | null = null;
  let embedded: EmbeddedServer | null = null;
  let host: ConsoleHost | null = null;
  let stopped = false;
  /** Held so that it is not collected (which would remove the icon); null until ready, or when none could be made. */
  let tray: Tray | null = null;
  /** Set by before-quit: from then on closing the window closes it for real. */
  let quitting = false;

  /** A new console window, once the app is set up (not during a quit); `hash` names its first screen. */
  const openWindow = (hash?: string) => {
    if (!host || quitting) return;
    const opened = createConsoleWindow({ preload: paths.preload(), callNames, ...(hash ? { hash } : {}) });
    mainWindow = opened;
    // With a tray, closing the window hides it there: the host goes on checking alerts.
    opened.on('close', (event) => {
      if (quitting || !tray) return;
      event.preventDefault();
      hideToTray(opened);
    });
    // Windows: a logout or shutdown emits no before-quit; the window must not hold it up by hiding.
    opened.on('session-end', () => (quitting = true));
    opened.on('closed', () => {
      if (mainWindow === opened) mainWindow = null;
    });
  };

  /** Brings the console forward: shown again when hidden or minimized, opened when gone. */
  const showWindow = () => {
    if (!mainWindow || mainWindow.isDestroyed()) return openWindow();
    if (mainWindow.isMinimized()) mainWindow.restore();
    mainWindow.show();
    mainWindow.focus();
  };

  app.on('second-instance', showWindow);

  app.on('window-all-closed', () => {
    // With a tray the app stays there. Without one, closing quits, except on macOS, which keeps
    // an app without windows running until Cmd+Q.
    if (!tray && process.platform !== 'darwin') app.quit();
  });

  // macOS: a click on the dock icon shows the window hidden to the tray, or opens one.
  app.on('activate', showWindow);

  app.on('before-quit', (event) => {
    quitting = true;
    host?.close();
    // The embedded server closes its stores before the app goes; then the quit resumes.
    if (stopped || !embedded) return;
    event.preventDefault();
    stopped = true;
    void embedded.stop().finally(() => app.quit());
  });

  void app.whenReady().then(() => {
    const userData = app.getPath('userData');
    const ses = session.defaultSession;
    applyContentSecurityPolicy(ses);
    denyAllPermissions(ses);
    handleAppScheme(paths.renderer());

    const profiles = new SealedProfileStore(userData, safeStorageBox(), (message) => {
      void dialog.showMessageBox({ type: 'warning', title: 'Sign-ins not saved', message });
    });
    const entry = paths.serverEntry();
    embedded = new EmbeddedServer({
      dataDir: join(userData, 'embedded'),
      // A utility process once packaged, the system `node` in development: see embeddedServerSpawner.
      spawn: embeddedServerSpawner(app.isPackaged),
      ...(entry ? { entry } : {}),
    });
    // Every change of the embedded server's state (a crash with its last log lines included) reaches the renderer.
    embedded.onChange((status) => {
      if (mainWindow && !mainWindow.isDestroyed()) mainWindow.webContents.send(EMBEDDED_STATUS_CHANNEL, status);
    });

    const alertStore = new AlertStore(join(userData, 'alerts'));
    const consoleHost = new ConsoleHost({
      shell: 'electron',
      version: app.getVersion(),
      profiles,
      embedded,
      alerts: { store: alertStore, notify: alertNotifier(() => mainWindow, openWindow) },
      savedViews: new SavedViewStore(join(userData, 'views')),
      preferences: new PreferenceStore(join(userData, 'preferences')),
    });
    host = consoleHost;
    registerBridge(consoleHost, () => mainWindow);
    openWindow();
    // What the host's minute-by-minute check does (only profiles with rules), at once.
    const checkAlerts = () => {
      for (const { id } of profiles.list()) {
        if (alertStore.get(id).rules.length > 0) void consoleHost.alerts.check(id).catch(() => undefined);
      }
    };
    try {
      tray = createTray({ open: showWindow, quit: () => app.quit(), checkAlerts });
    } catch {
      // No tray on this system: closing the window quits, as it did before there was one.
      tray = null;
    }
    // Started now so the demo server is up by the time the user signs in; a failure is a crashed status, already sent.
    void embedded.start().catch(() => undefined);
  });
}
