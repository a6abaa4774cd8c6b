import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import * as electron from './fakes/electron.js';
import { paths, runElectronShell } from '../../main/electron/lifecycle.js';
import type { ServerExit, ServerProcess } from '../../main/core/server-process.js';

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
  userData = mkdtempSync(join(tmpdir(), 'console-electron-main-'));
});
afterEach(() => rmSync(userData, { recursive: true, force: true }));

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

  it('sends no status to a closed window', async () => {
    await launch();
    electron.BrowserWindow.instances[0]!.close();
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

  it('quits when the last window closes, except on macOS', async () => {
    await launch();
    platform('linux');
    electron.app.fire('window-all-closed');
    expect(electron.app.quit).toHaveBeenCalledOnce();
    platform('darwin');
    electron.app.fire('window-all-closed');
    expect(electron.app.quit).toHaveBeenCalledOnce();
  });

  it('reopens the window on activate (macOS) and focuses it on a second instance', async () => {
    await launch();
    electron.BrowserWindow.instances[0]!.close();
    electron.app.fire('activate');
    expect(electron.BrowserWindow.getAllWindows()).toHaveLength(1);
    electron.app.fire('second-instance');
    expect(electron.BrowserWindow.getAllWindows()[0]!.focus).toHaveBeenCalledOnce();
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
