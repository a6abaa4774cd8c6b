import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import * as electron from './fakes/electron.js';
import { paths, runElectronShell } from '../../main/electron/lifecycle.js';
import type { ServerExit, ServerProcess } from '../../main/core/server-process.js';
import type { StoredAlert } from '../../main/core/alerts/alert-store.js';
import type * as HostModule from '../../main/core/host.js';
import type { ConsoleHost, HostOptions } from '../../main/core/host.js';
import { TRAY_TOOLTIP } from '../../main/electron/tray.js';

vi.mock('electron', () => import('./fakes/electron.js'));

// The lifecycle is EmbeddedServer's own concern (tested on its own); here a stand-in records what the shell asks.
const embeddedServers = vi.hoisted(() => [] as any[]);
vi.mock('../../main/core/embedded-server.js', async (importOriginal) => ({
  ...(await importOriginal<Record<string, unknown>>()),
  EmbeddedServer: class {
    listeners: ((status: unknown) => void)[] = [];
    start = vi.fn(() => Promise.resolve('http://127.0.0.1:1/api'));
    stop = vi.fn(() => Promise.resolve());
    restart = vi.fn(() => Promise.resolve('http://127.0.0.1:1/api'));
    status = vi.fn(() => ({ state: 'running', baseUrl: 'http://127.0.0.1:1/api', lastLog: [], demoAccount: null }));
    constructor(readonly options: Record<string, unknown>) {
      embeddedServers.push(this);
    }
    onChange(listener: (status: unknown) => void) {
      this.listeners.push(listener);
      return () => {};
    }
  },
}));

// The real host, its options recorded: a test raises an alert through the shell's notifier.
const hosts = vi.hoisted(() => [] as { host: ConsoleHost; options: HostOptions }[]);
vi.mock('../../main/core/host.js', async (importOriginal) => {
  const original = await importOriginal<typeof HostModule>();
  return {
    ...original,
    ConsoleHost: class extends original.ConsoleHost {
      constructor(options: HostOptions) {
        super(options);
        hosts.push({ host: this, options });
      }
    },
  };
});

let userData: string;

/** Runs the shell's lifecycle against a freshly reset fake; lets the ready callback run. */
async function launch(configure: (fake: typeof electron) => void = () => {}) {
  electron.reset();
  electron.app.userData = userData;
  configure(electron);
  runElectronShell();
  await new Promise((resolve) => setImmediate(resolve));
}

beforeEach(() => {
  embeddedServers.length = 0;
  hosts.length = 0;
  userData = mkdtempSync(join(tmpdir(), 'console-electron-main-'));
});
afterEach(() => {
  for (const { host } of hosts) host.close();
  rmSync(userData, { recursive: true, force: true });
});

const platform = (value: NodeJS.Platform) => Object.defineProperty(process, 'platform', { value, configurable: true });
const realPlatform = process.platform;
afterEach(() => platform(realPlatform));

describe('the Electron shell lifecycle', () => {
  it('quits at once when another instance holds the lock, opening nothing', async () => {
    await launch((fake) => (fake.app.lock = false));
    expect(electron.app.quit).toHaveBeenCalledOnce();
    expect(electron.BrowserWindow.instances).toHaveLength(0);
    expect(embeddedServers).toHaveLength(0);
    // The scheme is registered before anything else, whatever happens next.
    expect(electron.protocol.privileged).toHaveLength(1);
  });

  it('when ready: hardens the session, serves the renderer, opens one secure window and starts the embedded server', async () => {
    await launch();
    const session = electron.session.defaultSession;
    expect(session.headersListener).not.toBeNull();
    expect(session.permissionRequestHandler).not.toBeNull();
    expect(session.permissionCheckHandler).not.toBeNull();
    expect(electron.protocol.handlers.has('app')).toBe(true);

    const [window] = electron.BrowserWindow.instances;
    expect(electron.BrowserWindow.instances).toHaveLength(1);
    expect(window!.loadedUrl).toBe('app://console/index.html');
    const preferences = window!.options.webPreferences as Record<string, unknown>;
    expect(preferences).toMatchObject({
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      webSecurity: true,
    });
    expect(preferences.preload).toBe(join('/app', 'dist', 'main', 'electron', 'preload.cjs'));
    expect((preferences.additionalArguments as string[])[0]).toMatch(
      /^--gateway-console-calls=.*\bapp\.info\b.*\bprofiles\.list\b/,
    );

    const [server] = embeddedServers;
    expect(server.options.dataDir).toBe(join(userData, 'embedded'));
    expect(typeof server.options.spawn).toBe('function');
    // Run from source (as here): EmbeddedServer's default entry, server/cli.ts through tsx.
    expect(server.options.entry).toBeUndefined();
    expect(server.start).toHaveBeenCalledOnce();
  });

  it('runs the compiled server from dist/ in development when the shell itself is compiled', async () => {
    await launch();
    expect(paths.serverEntry(true)).toBe(join('/app', 'dist', 'server', 'cli.js'));
    expect(paths.serverEntry(false)).toBeUndefined();
  });

  it('in development, runs the embedded server with the system node as a child process, not a utility process', async () => {
    const previous = process.env.GC_NODE;
    process.env.GC_NODE = process.execPath;
    try {
      await launch();
    } finally {
      if (previous === undefined) delete process.env.GC_NODE;
      else process.env.GC_NODE = previous;
    }
    const script = join(userData, 'server.mjs');
    writeFileSync(
      script,
      "process.stdout.write(JSON.stringify({ args: process.argv.slice(2), electron: 'electron' in process.versions }));\n",
    );
    const child: ServerProcess = embeddedServers[0].options.spawn({
      entry: script,
      args: ['serve'],
      execArgv: [],
      env: {},
    });
    let output = '';
    child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    const exit = await new Promise<ServerExit>((resolve) => child.onExit(resolve));
    expect(exit).toMatchObject({ code: 0, signal: null });
    expect(JSON.parse(output)).toEqual({ args: ['serve'], electron: false });
    expect(electron.utilityProcess.forked).toHaveLength(0);
  });

  it('runs the compiled server once packaged', async () => {
    await launch((fake) => {
      fake.app.isPackaged = true;
      fake.app.appPath = '/opt/Gateway Console/resources/app.asar';
    });
    const server = embeddedServers[0];
    expect(server.options.entry).toBe(
      join('/opt/Gateway Console/resources/app.asar.unpacked', 'dist', 'server', 'cli.js'),
    );
    // In a utility process, whose Node is Electron's (better-sqlite3 rebuilt for it by electron-builder).
    server.options.spawn({ entry: server.options.entry, args: ['serve'], execArgv: [], env: {} });
    expect(electron.utilityProcess.forked).toHaveLength(1);
    expect(electron.utilityProcess.forked[0]!.modulePath).toBe(server.options.entry);
    // The renderer and the preload stay inside the archive.
    const preferences = electron.BrowserWindow.instances[0]!.options.webPreferences as Record<string, unknown>;
    expect(preferences.preload).toBe(
      join('/opt/Gateway Console/resources/app.asar', 'dist', 'main', 'electron', 'preload.cjs'),
    );
  });

  it('answers the bridge from the window, as the electron shell with the app version', async () => {
    await launch();
    const contents = electron.BrowserWindow.instances[0]!.webContents;
    const answer = await electron.ipcMain.invoke(
      'bridge:call',
      { sender: contents, senderFrame: contents.mainFrame },
      'app.info',
      {},
    );
    expect(answer).toEqual({ ok: true, result: { shell: 'electron', version: '0.1.0-test' } });
  });

  it('forwards every embedded status change, a crash included, on the one status channel', async () => {
    await launch();
    const crashed = { state: 'crashed', baseUrl: null, lastLog: ['Error: boom'], demoAccount: null };
    embeddedServers[0].listeners.forEach((listener: (s: unknown) => void) => listener(crashed));
    expect(electron.BrowserWindow.instances[0]!.webContents.sent).toEqual([['embedded:status', crashed]]);
  });

  it('sends no status to a window that is gone', async () => {
    await launch();
    electron.BrowserWindow.instances[0]!.destroy();
    embeddedServers[0].listeners.forEach((listener: (s: unknown) => void) => listener({ state: 'stopped' }));
    expect(electron.BrowserWindow.instances[0]!.webContents.sent).toEqual([]);
  });

  it('stops the embedded server before quitting, then quits', async () => {
    await launch();
    const event = electron.app.fire('before-quit');
    expect(event.defaultPrevented).toBe(true);
    expect(embeddedServers[0].stop).toHaveBeenCalledOnce();
    await new Promise((resolve) => setImmediate(resolve));
    expect(electron.app.quit).toHaveBeenCalledOnce();
    // The second before-quit (from that quit) goes through.
    expect(electron.app.fire('before-quit').defaultPrevented).toBe(false);
    expect(embeddedServers[0].stop).toHaveBeenCalledOnce();
  });

  it('keeps running in the tray when the last window goes, on every platform', async () => {
    await launch();
    for (const name of ['linux', 'win32', 'darwin'] as const) {
      platform(name);
      electron.app.fire('window-all-closed');
    }
    expect(electron.app.quit).not.toHaveBeenCalled();
  });

  it('without a tray (none could be made), closing quits as before, except on macOS', async () => {
    await launch((fake) => (fake.Tray.unavailable = true));
    expect(electron.Tray.instances).toHaveLength(0);
    const window = electron.BrowserWindow.instances[0]!;
    expect(window.close().defaultPrevented).toBe(false);
    expect(window.destroyed).toBe(true);
    platform('linux');
    electron.app.fire('window-all-closed');
    expect(electron.app.quit).toHaveBeenCalledOnce();
    platform('darwin');
    electron.app.fire('window-all-closed');
    expect(electron.app.quit).toHaveBeenCalledOnce();
  });

  it('shows the window hidden to the tray on activate (macOS) and on a second instance', async () => {
    await launch();
    const window = electron.BrowserWindow.instances[0]!;
    window.close();
    expect(window.visible).toBe(false);
    electron.app.fire('activate');
    expect(window.visible).toBe(true);
    expect(electron.BrowserWindow.instances).toHaveLength(1);
    window.close();
    electron.app.fire('second-instance');
    expect(window.visible).toBe(true);
    expect(window.focus).toHaveBeenCalledTimes(2);
  });

  it('opens a new window on activate (macOS) when the window is gone', async () => {
    await launch();
    electron.BrowserWindow.instances[0]!.destroy();
    electron.app.fire('activate');
    expect(electron.BrowserWindow.getAllWindows()).toHaveLength(1);
    expect(electron.BrowserWindow.instances).toHaveLength(2);
  });

  it('tells the user once, in a dialog, when sign-ins cannot be saved', async () => {
    await launch((fake) => (fake.safeStorage.available = false));
    const contents = electron.BrowserWindow.instances[0]!.webContents;
    const sender = { sender: contents, senderFrame: contents.mainFrame };
    const added = (await electron.ipcMain.invoke('bridge:call', sender, 'profiles.add', {
      name: 'Local',
      kind: 'remote',
      baseUrl: 'http://127.0.0.1:9/api',
    })) as { ok: boolean };
    expect(added.ok).toBe(true);
    // Signing out empties and saves the jar: the save is refused, and said so.
    const list = (await electron.ipcMain.invoke('bridge:call', sender, 'profiles.list', {})) as any;
    await electron.ipcMain.invoke('bridge:call', sender, 'session.signOut', { profileId: list.result.profiles[0].id });
    await electron.ipcMain.invoke('bridge:call', sender, 'session.signOut', { profileId: list.result.profiles[0].id });
    expect(electron.dialog.showMessageBox).toHaveBeenCalledOnce();
    expect(electron.dialog.showMessageBox.mock.calls[0]![0]).toMatchObject({ type: 'warning' });
  });
});

/** The launched shell's one tray, its menu, and a visible window (as after ready-to-show). */
async function launchWithTray() {
  await launch();
  expect(electron.Tray.instances).toHaveLength(1);
  const tray = electron.Tray.instances[0]!;
  const window = electron.BrowserWindow.instances[0]!;
  window.emit('ready-to-show');
  expect(window.visible).toBe(true);
  return { tray, menu: tray.menu!, window };
}

const alert = (overrides: Partial<StoredAlert> = {}): StoredAlert => ({
  seq: 1,
  ruleId: 'spend-week',
  subject: 'key-1',
  title: 'Key runs out',
  body: 'Key "ci" runs out within 7 days',
  screen: 'spend',
  params: { key: 'key-1' },
  firedAt: '2025-01-01T00:00:00.000Z',
  delivered: false,
  ...overrides,
});

describe('the tray', () => {
  it('is made once ready, with the icon, a tooltip saying alerts go on, and its menu', async () => {
    const { tray, menu } = await launchWithTray();
    expect(tray.toolTip).toBe(TRAY_TOOLTIP);
    expect(tray.toolTip).toMatch(/^Gateway Console\b.*alerts keep being checked/);
    const icon = tray.image as electron.FakeNativeImage;
    expect(icon.isEmpty()).toBe(false);
    expect(icon.representations).toEqual([{ scaleFactor: 2, dataURL: expect.stringMatching(/^data:image\/png;/) }]);
    expect(menu.labels()).toEqual(['Open Gateway Console', 'Check alerts now', '---', 'Quit']);
  });

  it.each(['linux', 'win32', 'darwin'] as const)(
    'on %s, closing the window hides it to the tray and does not quit',
    async (name) => {
      platform(name);
      const { window } = await launchWithTray();
      const event = window.close();
      expect(event.defaultPrevented).toBe(true);
      expect(window.destroyed).toBe(false);
      expect(window.visible).toBe(false);
      expect(electron.app.quit).not.toHaveBeenCalled();
      expect(embeddedServers[0].stop).not.toHaveBeenCalled();
      // The renderer still runs, hidden: it is kept told of the embedded server.
      embeddedServers[0].listeners.forEach((listener: (s: unknown) => void) => listener({ state: 'stopped' }));
      expect(window.webContents.sent).toEqual([['embedded:status', { state: 'stopped' }]]);
    },
  );

  it('takes a full-screen window out of full screen before hiding it', async () => {
    const { window } = await launchWithTray();
    window.fullScreen = true;
    expect(window.close().defaultPrevented).toBe(true);
    expect(window.fullScreen).toBe(false);
    expect(window.visible).toBe(false);
  });

  it('"Open Gateway Console" shows the hidden window again, or opens one when it is gone', async () => {
    const { menu, window } = await launchWithTray();
    window.close();
    menu.click('Open Gateway Console');
    expect(window.visible).toBe(true);
    expect(window.focus).toHaveBeenCalledOnce();
    expect(electron.BrowserWindow.instances).toHaveLength(1);

    window.destroy();
    menu.click('Open Gateway Console');
    expect(electron.BrowserWindow.getAllWindows()).toHaveLength(1);
    expect(electron.BrowserWindow.instances[1]!.loadedUrl).toBe('app://console/index.html');
  });

  it('a left click on the icon opens the window, except on macOS (where it opens the menu)', async () => {
    platform('win32');
    const { tray, window } = await launchWithTray();
    window.close();
    tray.emit('click');
    expect(window.visible).toBe(true);

    platform('darwin');
    const mac = await launchWithTray();
    mac.window.close();
    mac.tray.emit('click');
    expect(mac.window.visible).toBe(false);
  });

  it('"Quit" quits for real: the host stops, the embedded server stops, then the window closes', async () => {
    const { menu, window } = await launchWithTray();
    const stopAlerts = vi.spyOn(hosts[0]!.host.alerts, 'stop');
    menu.click('Quit');
    expect(electron.app.quit).toHaveBeenCalledOnce();
    // Electron's side of app.quit(): before-quit, then the windows are closed.
    const first = electron.app.fire('before-quit');
    expect(first.defaultPrevented).toBe(true);
    expect(stopAlerts).toHaveBeenCalled();
    expect(embeddedServers[0].stop).toHaveBeenCalledOnce();
    await new Promise((resolve) => setImmediate(resolve));
    expect(electron.app.quit).toHaveBeenCalledTimes(2);
    expect(electron.app.fire('before-quit').defaultPrevented).toBe(false);
    expect(window.close().defaultPrevented).toBe(false);
    expect(window.destroyed).toBe(true);
    // Nothing opens a window while the app goes.
    menu.click('Open Gateway Console');
    expect(electron.BrowserWindow.instances).toHaveLength(1);
  });

  it('lets a Windows logout or shutdown close the window (no before-quit then)', async () => {
    const { window } = await launchWithTray();
    window.emit('session-end');
    expect(window.close().defaultPrevented).toBe(false);
    expect(window.destroyed).toBe(true);
  });

  it('"Check alerts now" checks each profile that has rules, at once', async () => {
    const { menu, window } = await launchWithTray();
    const contents = window.webContents;
    const sender = { sender: contents, senderFrame: contents.mainFrame };
    const call = async (name: string, args: unknown) => {
      const answer = (await electron.ipcMain.invoke('bridge:call', sender, name, args)) as { ok: boolean; result: any };
      expect(answer.ok).toBe(true);
      return answer.result;
    };
    const watched = await call('profiles.add', { name: 'Watched', kind: 'remote', baseUrl: 'http://127.0.0.1:9/api' });
    await call('profiles.add', { name: 'Quiet', kind: 'remote', baseUrl: 'http://127.0.0.1:9/api' });
    await call('alerts.setRules', { profileId: watched.id, rules: [{ id: 'expiry', kind: 'expires', days: 7 }] });
    const check = vi.spyOn(hosts[0]!.host.alerts, 'check');
    menu.click('Check alerts now');
    expect(check).toHaveBeenCalledExactlyOnceWith(watched.id);
    // Signed out: the check says so beside the rules, as the minute's check would.
    await check.mock.results[0]!.value;
    const view = await call('alerts.get', { profileId: watched.id });
    expect(view.check.problem).toMatch(/signed out/);
  });
});

describe('alert notifications with the window closed', () => {
  it('a click shows the window hidden to the tray, on the screen the alert names', async () => {
    const { window } = await launchWithTray();
    window.close();
    expect(hosts[0]!.options.alerts!.notify!('profile-1', alert())).toBe(true);
    const [notification] = electron.Notification.instances;
    expect(notification!.shown).toBe(true);
    expect(notification!.options).toEqual({ title: 'Key runs out', body: 'Key "ci" runs out within 7 days' });
    notification!.emit('click');
    expect(window.visible).toBe(true);
    expect(window.focus).toHaveBeenCalledOnce();
    expect(window.webContents.executeJavaScript).toHaveBeenCalledExactlyOnceWith(
      'location.hash = "#/spend?key=key-1";',
    );
    expect(electron.BrowserWindow.instances).toHaveLength(1);
  });

  it('a click opens a new window on that screen when the window is gone', async () => {
    const { window } = await launchWithTray();
    window.destroy();
    hosts[0]!.options.alerts!.notify!('profile-1', alert({ screen: 'keys', params: {} }));
    electron.Notification.instances[0]!.emit('click');
    expect(electron.BrowserWindow.getAllWindows()).toHaveLength(1);
    const opened = electron.BrowserWindow.instances[1]!;
    expect(opened.loadedUrl).toBe('app://console/index.html#/keys');
    // It shows itself once ready to (no blank window first); the old one is not scripted.
    expect(opened.visible).toBe(false);
    opened.emit('ready-to-show');
    expect(opened.visible).toBe(true);
    expect(window.webContents.executeJavaScript).not.toHaveBeenCalled();
    // That window too hides to the tray.
    expect(opened.close().defaultPrevented).toBe(true);
  });

  it('raises none where the system has no notifications (the page raises its own)', async () => {
    await launchWithTray();
    electron.Notification.supported = false;
    expect(hosts[0]!.options.alerts!.notify!('profile-1', alert())).toBe(false);
    expect(electron.Notification.instances).toHaveLength(0);
  });
});
