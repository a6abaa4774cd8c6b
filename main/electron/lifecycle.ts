import { join } from 'node:path';
import { app, BrowserWindow, dialog, session } from 'electron';
import { AlertStore } from '../core/alerts/alert-store.js';
import { callNames } from '../core/contract.js';
import { EmbeddedServer } from '../core/embedded-server.js';
import { ConsoleHost } from '../core/host.js';
import { alertNotifier } from './alert-notifications.js';
import { handleAppScheme, registerAppScheme } from './app-protocol.js';
import { EMBEDDED_STATUS_CHANNEL } from './channels.js';
import { registerBridge } from './ipc.js';
import { SealedProfileStore, safeStorageBox } from './safe-storage-box.js';
import { applyContentSecurityPolicy, denyAllPermissions } from './security.js';
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

  const showWindow = () => {
    if (!mainWindow || mainWindow.isDestroyed()) return;
    if (mainWindow.isMinimized()) mainWindow.restore();
    mainWindow.focus();
  };

  const openWindow = () => {
    const opened = createConsoleWindow({ preload: paths.preload(), callNames });
    mainWindow = opened;
    opened.on('closed', () => (mainWindow = null));
    return opened;
  };

  app.on('second-instance', showWindow);

  app.on('window-all-closed', () => {
    // macOS keeps an app without windows running until Cmd+Q.
    if (process.platform !== 'darwin') app.quit();
  });

  app.on('activate', () => {
    if (app.isReady() && BrowserWindow.getAllWindows().length === 0) openWindow();
  });

  app.on('before-quit', (event) => {
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

    host = new ConsoleHost({
      shell: 'electron',
      version: app.getVersion(),
      profiles,
      embedded,
      alerts: { store: new AlertStore(join(userData, 'alerts')), notify: alertNotifier(() => mainWindow, openWindow) },
    });
    registerBridge(host, () => mainWindow);
    openWindow();
    // Started now so the demo server is up by the time the user signs in; a failure is a crashed status, already sent.
    void embedded.start().catch(() => undefined);
  });
}
