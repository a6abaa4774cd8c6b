import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { request } from 'undici';
import OpenAI from 'openai';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { appDataDir } from '../../main/core/app-data.js';
import { DEMO_MARKER, EmbeddedServer, type EmbeddedServerOptions } from '../../main/core/embedded-server.js';
import type { EmbeddedStatus } from '../../main/core/contract.js';
import { MAX_SOCKET_PATH_BYTES, SOCKET_FILE } from '../../main/core/embedded-socket.js';
import { ConsoleError } from '../../main/core/errors.js';
import { ConsoleHost, type EmbeddedConnection } from '../../main/core/host.js';
import { ownerOnlyFile, ProfileStore } from '../../main/core/profiles.js';
import { spawnWithNode, type ServerLaunch } from '../../main/core/server-process.js';
import { DEMO_ACCOUNTS } from '../../server/demo/organisation.js';
import { EMBEDDED_ADDRESS } from '../../server/schemas/embedded-names.js';

/**
 * The embedded server's lifecycle with real processes: the real control plane for
 * start, ready, crash, restart and stop (one server, shared by the first group, as each
 * start costs seconds of tsx compiling), and a small stand-in for the ways a server can
 * fail that the real one will not do on demand.
 */

const root = resolve(import.meta.dirname, '../..');
const FAKE_SERVER = join(root, 'test/main/fixtures/fake-server.ts');
const FAKE_HOST = join(root, 'test/main/fixtures/host.ts');
// A cheaper password hash keeps the demo seed quick on a small machine. No live demo traffic: it
// brings the demo's outage (gpt-4o-mini down minutes 20–24 of each hour), and an answer through
// the gateway must not depend on the hour the test runs at.
const ENV = { SVC_PASSWORD_COST: '10', SVC_DEMO_TRAFFIC: '0' };
const PASSWORDS = DEMO_ACCOUNTS.map((account) => account.password);

const folders: string[] = [];
function dataFolder(): string {
  const folder = mkdtempSync(join(tmpdir(), 'gc-embedded-'));
  folders.push(folder);
  return folder;
}

afterAll(() => {
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});

/** Polls `check` every 50 ms until it returns a value, or fails after `ms`. */
async function waitFor<T>(what: string, check: () => T | undefined | null | false, ms = 30_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = check();
    if (value !== undefined && value !== null && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((done) => setTimeout(done, 50));
  }
}

/** Alive and not a zombie waiting for a parent that is gone. */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  if (process.platform !== 'linux') return true;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

/** Resolves with the first status in `state` the server reports to its listeners. */
function reported(server: EmbeddedServer, state: EmbeddedStatus['state']): Promise<EmbeddedStatus> {
  return new Promise((done) => {
    const off = server.onChange((status) => {
      if (status.state !== state) return;
      off();
      done(status);
    });
  });
}

/** A request through the connection the host is given: to its socket, whatever the URL's host says. */
async function send(connection: EmbeddedConnection, path: string, body?: unknown) {
  const response = await request(`${connection.baseUrl}${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
    dispatcher: connection.dispatcher,
  });
  return { status: response.statusCode, body: (await response.body.json()) as Record<string, unknown> };
}

async function logIn(connection: EmbeddedConnection, account: { email: string; password: string }): Promise<number> {
  return (await send(connection, '/auth/login', account)).status;
}

/** The socket's mode and its folder's, POSIX permissions only. */
function modes(socket: string): { socket: number; folder: number; isSocket: boolean } {
  const stat = lstatSync(socket);
  return { socket: stat.mode & 0o777, folder: statSync(dirname(socket)).mode & 0o777, isSocket: stat.isSocket() };
}

function noPasswordIn(lines: string[]): void {
  for (const line of lines) for (const password of PASSWORDS) expect(line).not.toContain(password);
}

describe('the real control plane, embedded', () => {
  const dataDir = dataFolder();
  const socket = join(dataDir, SOCKET_FILE);
  let server: EmbeddedServer;
  const states: string[] = [];
  const launches: ServerLaunch[] = [];
  let first: EmbeddedConnection | null = null;

  beforeAll(() => {
    const spawnServer = (launch: ServerLaunch) => {
      launches.push(launch);
      return spawnWithNode(launch);
    };
    server = new EmbeddedServer({ dataDir, env: ENV, spawn: spawnServer });
    server.onChange((status) => states.push(status.state));
  });

  afterAll(async () => {
    await server.stop();
  });

  it('starts on a fresh folder, answers, seeds the demo data and offers the demo admin', async () => {
    expect(server.status()).toEqual({ state: 'stopped', baseUrl: null, lastLog: [], demoAccount: null });

    const [a, b] = await Promise.all([server.start(), server.start()]);
    expect(a).toBe(b);
    expect(a.baseUrl).toBe(EMBEDDED_ADDRESS);
    expect(states).toEqual(['starting', 'running']);
    first = a;
    // Running as soon as the organisation exists: its history is written after, and said.
    expect(server.status().demoHistory).toMatchObject({ of: 50_000 });

    const openapi = await send(a, '/openapi.json');
    expect(openapi.status).toBe(200);
    expect(openapi.body.openapi).toBeTruthy();

    const status = server.status();
    expect(status.state).toBe('running');
    expect(status.baseUrl).toBe(a.baseUrl);
    const admin = DEMO_ACCOUNTS.find((account) => account.role === 'admin') ?? DEMO_ACCOUNTS[0]!;
    // The renderer sees the demo admin's email only; the password stays with the host.
    expect(status.demoAccount).toEqual({ email: admin.email });
    expect(JSON.stringify(status)).not.toContain(admin.password);
    expect(server.demoCredentials()).toEqual({ email: admin.email, password: admin.password });
    expect(await logIn(a, server.demoCredentials()!)).toBe(200);

    // The history lands in parts, told as it goes, until it is whole.
    const told: number[] = [];
    const off = server.onChange((change) => told.push(change.demoHistory?.rows ?? -1));
    const whole = await waitFor('the whole history', () => {
      const history = server.status().demoHistory;
      return history && history.rows === history.of && history;
    });
    off();
    expect(whole).toEqual({ rows: 50_000, of: 50_000 });
    expect(told).toEqual([...told].sort((x, y) => x - y));
    // Its output and its messages travel apart: the line may come a moment after.
    const seeded = 'Demo data seeded: 12 keys, 50000 request-log rows.';
    const log = await waitFor(
      'the seeded line',
      () => server.status().lastLog.includes(seeded) && server.status().lastLog,
    );
    expect(log).toContain(`Control plane listening on the socket ${socket}`);
    noPasswordIn(log);

    // Idempotent: the running server's address, no second process.
    const pid = server.pid;
    expect(await server.start()).toBe(a);
    expect(launches).toHaveLength(1);
    expect(server.pid).toBe(pid);
    // Each step of the history was news of a running server, never another state.
    expect(states.filter((state, i) => state !== states[i - 1])).toEqual(['starting', 'running']);
  }, 120_000);

  it('listens on a socket in its data folder that only its user can open, and on no TCP port', () => {
    expect(server.socketPath).toBe(socket);
    if (process.platform !== 'win32') expect(modes(socket)).toEqual({ socket: 0o600, folder: 0o700, isSocket: true });
    // Nothing asks it for a port: the old `--host 127.0.0.1 --port 0` is gone, and its one
    // address names no port (the server's own test sees it bind a path: test/server/socket.test.ts).
    const args = launches[0]!.args;
    expect(args.slice(0, 3)).toEqual(['serve', '--socket', socket]);
    expect(args).not.toContain('--port');
    expect(args).not.toContain('--host');
    expect(new URL(server.status().baseUrl!).port).toBe('');
  });

  it('signs in the demo admin in one click through the host, over the socket', async () => {
    const profiles = new ProfileStore(dataFolder(), ownerOnlyFile);
    const host = new ConsoleHost({ shell: 'web', version: 'test', profiles, embedded: server });
    const profile = profiles.add({ name: 'Embedded demo', kind: 'embedded' });
    const admin = DEMO_ACCOUNTS.find((account) => account.role === 'admin') ?? DEMO_ACCOUNTS[0]!;

    expect(await host.dispatch('session.signInDemo', { profileId: profile.id })).toMatchObject({ ok: true });
    expect(await host.dispatch('session.me', { profileId: profile.id })).toMatchObject({
      ok: true,
      result: { email: admin.email, role: 'admin' },
    });
    // The jar's cookies are filed under the address the profile view looks them up by.
    expect(await host.dispatch('profiles.list', {})).toMatchObject({
      ok: true,
      result: { profiles: [{ signedIn: true }] },
    });
  }, 60_000);

  it('runs the gateway on a loopback port, answered offline by the simulated upstream, for a key made through the host', async () => {
    const gatewayUrl = server.status().gatewayUrl;
    expect(gatewayUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/);
    const profiles = new ProfileStore(dataFolder(), ownerOnlyFile);
    const host = new ConsoleHost({ shell: 'web', version: 'test', profiles, embedded: server });
    const profile = profiles.add({ name: 'Embedded demo', kind: 'embedded' });
    expect(await host.dispatch('session.signInDemo', { profileId: profile.id })).toMatchObject({ ok: true });
    const projects = await host.dispatch('api.projects', { profileId: profile.id });
    if (!projects.ok) throw new Error(projects.error.message);
    const created = await host.dispatch('api.createKey', {
      profileId: profile.id,
      body: {
        project_id: (projects.result as { projects: { id: string }[] }).projects[0]!.id,
        name: 'through the gateway',
      },
    });
    if (!created.ok) throw new Error(created.error.message);
    const openai = new OpenAI({
      apiKey: (created.result as { api_key: string }).api_key,
      baseURL: gatewayUrl,
      maxRetries: 0,
    });
    const answer = await openai.chat.completions.create({
      model: 'openai/gpt-4o-mini',
      messages: [{ role: 'user', content: 'Are you there?' }],
    });
    expect(answer.choices[0]?.message.content?.length).toBeGreaterThan(0);
  }, 60_000);

  it('reports a crash with its last log lines, no password among them, and refuses to start until restarted', async () => {
    const told = reported(server, 'crashed');
    process.kill(server.pid!, 'SIGKILL');
    const crashed = await told;

    expect(crashed.state).toBe('crashed');
    expect(crashed.baseUrl).toBeNull();
    expect(crashed.lastLog.length).toBeGreaterThan(2);
    expect(crashed.lastLog.at(-1)).toMatch(/\[console\] the embedded server was ended by SIGKILL/);
    noPasswordIn(crashed.lastLog);
    expect(server.status()).toEqual(crashed);

    const refused = await server.start().catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(ConsoleError);
    expect((refused as ConsoleError).status).toBe(503);
    // Killed, it could not remove its socket: the next start finds it in the way.
    if (process.platform !== 'win32') expect(lstatSync(socket).isSocket()).toBe(true);
  }, 30_000);

  it('restarts on the same data, past the stale socket, without seeding it again', async () => {
    const restarted = await server.restart();
    expect(restarted.baseUrl).toBe(EMBEDDED_ADDRESS);
    expect(restarted).not.toBe(first);
    expect(states.slice(-3)).toEqual(['stopped', 'starting', 'running']);
    if (process.platform !== 'win32') expect(modes(socket)).toEqual({ socket: 0o600, folder: 0o700, isSocket: true });

    const status = server.status();
    expect(status.state).toBe('running');
    expect(status.lastLog.some((line) => line.includes('Demo data seeded'))).toBe(false);
    expect(status.demoAccount).not.toBeNull();
    // The account seeded on the first launch signs in on this one.
    expect(await logIn(restarted, server.demoCredentials()!)).toBe(200);
    first = restarted;
  }, 120_000);

  it('stops: the process ends and its socket is gone', async () => {
    const pid = server.pid!;
    await server.stop();

    expect(server.status()).toMatchObject({ state: 'stopped', baseUrl: null });
    expect(states.at(-1)).toBe('stopped');
    expect(alive(pid)).toBe(false);
    expect(existsSync(socket)).toBe(false);
    await expect(send(first!, '/openapi.json')).rejects.toThrow();
    // The demo data is still in place, so the credentials are still offered.
    expect(server.status().demoAccount).not.toBeNull();
    await server.stop();
    expect(server.status().state).toBe('stopped');
  }, 30_000);

  it('offers the demo admin for a folder an older console seeded, and none for one seeded elsewhere', async () => {
    const admin = DEMO_ACCOUNTS.find((account) => account.role === 'admin') ?? DEMO_ACCOUNTS[0]!;
    // Older consoles recorded the seeding without the account.
    writeFileSync(join(dataDir, DEMO_MARKER), '{"demo":"seeded"}\n');
    const older = new EmbeddedServer({ dataDir, env: ENV });
    expect(older.demoCredentials()).toBeNull();
    try {
      await older.start();
      expect(older.status().demoAccount).toEqual({ email: admin.email });
      noPasswordIn(older.status().lastLog);
    } finally {
      await older.stop();
    }
    const marker = JSON.parse(readFileSync(join(dataDir, DEMO_MARKER), 'utf8')) as { account?: unknown };
    expect(marker.account).toEqual({ email: admin.email, password: admin.password });

    // The same demo data without the console's marker: someone else seeded it, nothing is offered.
    rmSync(join(dataDir, DEMO_MARKER));
    const stranger = new EmbeddedServer({ dataDir, env: ENV });
    try {
      await stranger.start();
      expect(stranger.status().demoAccount).toBeNull();
    } finally {
      await stranger.stop();
    }
    expect(existsSync(join(dataDir, DEMO_MARKER))).toBe(false);
  }, 120_000);
});

describe("the embedded server's socket", () => {
  it('is not made by deleting a file that is not a socket: the server refuses, saying why', async () => {
    const dataDir = dataFolder();
    const inTheWay = join(dataDir, SOCKET_FILE);
    writeFileSync(inTheWay, 'not a socket\n');
    const server = new EmbeddedServer({ dataDir, env: ENV });
    try {
      await expect(server.start()).rejects.toBeInstanceOf(ConsoleError);
      const status = server.status();
      expect(status.state).toBe('crashed');
      expect(status.lastLog).toContain(
        `--socket ${inTheWay}: something that is not a socket is there; not removing it`,
      );
      expect(readFileSync(inTheWay, 'utf8')).toBe('not a socket\n');
    } finally {
      await server.stop();
    }
  }, 60_000);

  it.skipIf(process.platform === 'win32')(
    'moves to a private temporary folder when the data folder is too deep for a socket path',
    async () => {
      let dataDir = dataFolder();
      while (Buffer.byteLength(join(dataDir, SOCKET_FILE)) <= MAX_SOCKET_PATH_BYTES)
        dataDir = join(dataDir, 'deeper-folder');
      mkdirSync(dataDir, { recursive: true });
      const server = new EmbeddedServer({ dataDir, entry: FAKE_SERVER, env: { FAKE_MODE: 'serve' } });
      try {
        await server.start();
        const socket = server.socketPath!;
        expect(Buffer.byteLength(socket)).toBeLessThanOrEqual(MAX_SOCKET_PATH_BYTES);
        expect(socket.startsWith(join(tmpdir(), 'gateway-console-'))).toBe(true);
        expect(modes(socket)).toMatchObject({ folder: 0o700, isSocket: true });
        expect(server.status().lastLog).toContain(
          `fake server args: serve --socket ${socket} --data-dir ${dataDir} --gateway-port 0 --simulated-upstream --announce --demo`,
        );

        await server.stop();
        // The folder was this start's alone: gone with the server.
        expect(existsSync(dirname(socket))).toBe(false);
      } finally {
        await server.stop();
      }
    },
    30_000,
  );
});

describe('a stand-in server for the failures', () => {
  const servers: EmbeddedServer[] = [];
  const hosts: ChildProcess[] = [];

  function fake(
    mode: 'serve' | 'fail' | 'hang' | 'garble',
    options: Partial<EmbeddedServerOptions> = {},
  ): EmbeddedServer {
    const server = new EmbeddedServer({
      dataDir: dataFolder(),
      entry: FAKE_SERVER,
      env: { FAKE_MODE: mode },
      ...options,
    });
    servers.push(server);
    return server;
  }

  afterEach(async () => {
    for (const host of hosts.splice(0)) host.kill('SIGKILL');
    await Promise.all(servers.splice(0).map((server) => server.stop()));
  });

  it('reports a server that exits with an error as crashed, with its output and no credentials', async () => {
    const server = fake('fail');
    const told = reported(server, 'crashed');

    const failure = await server.start().catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ConsoleError);
    expect((failure as ConsoleError).message).toMatch(/crashed/);
    const crashed = await told;

    expect(crashed.state).toBe('crashed');
    expect(crashed.lastLog).toContain('fake server: cannot open the database');
    expect(crashed.lastLog).toContain('last words without a newline');
    expect(crashed.lastLog.at(-1)).toBe('[console] the embedded server exited with code 3 before it was ready');
    expect(crashed.lastLog.join('\n')).not.toContain('fake-secret');
    expect(crashed.demoAccount).toBeNull();
  }, 30_000);

  it('gives up on a server that never answers, stopping it at the deadline', async () => {
    const server = fake('hang', { readyTimeoutMs: 1_500 });
    const start = server.start();
    const pid = await waitFor('the process', () => server.pid);

    await expect(start).rejects.toBeInstanceOf(ConsoleError);
    expect(server.status().state).toBe('crashed');
    expect(server.status().lastLog.at(-1)).toBe(
      '[console] the embedded server printed no address within 1.5 s; stopped it',
    );
    expect(alive(pid)).toBe(false);
  }, 30_000);

  it('gives up at once on a server whose announcement fails the check', async () => {
    const server = fake('garble');
    const start = server.start();
    const pid = await waitFor('the process', () => server.pid);

    await expect(start).rejects.toBeInstanceOf(ConsoleError);
    expect(server.status().state).toBe('crashed');
    expect(server.status().lastLog.at(-1)).toBe(
      '[console] the embedded server announced itself in a message the console cannot read; stopped it',
    );
    expect(alive(pid)).toBe(false);
  }, 30_000);

  it('a stop during the start ends it as stopped, not crashed', async () => {
    const server = fake('hang');
    const start = server.start();
    const pid = await waitFor('the process', () => server.pid);

    await server.stop();
    await expect(start).rejects.toThrow(/stopped before it was ready/);
    expect(server.status().state).toBe('stopped');
    expect(alive(pid)).toBe(false);
  }, 30_000);

  it('seeds only a new folder, and offers the demo account only where it seeded', async () => {
    const freshDir = dataFolder();
    const fresh = fake('serve', { dataDir: freshDir });
    await fresh.start();
    expect(fresh.status().lastLog.find((line) => line.startsWith('fake server args:'))).toMatch(/--demo$/);
    expect(fresh.status().demoAccount).not.toBeNull();
    await fresh.restart();
    expect(fresh.status().lastLog.find((line) => line.startsWith('fake server args:'))).not.toMatch(/--demo/);
    expect(fresh.status().demoAccount).not.toBeNull();

    // The credentials came in the server's announcement and are kept, for the owner only, for later hosts.
    const credentials = { email: 'admin@demo.example', password: 'fake-admin-password' };
    expect(fresh.demoCredentials()).toEqual(credentials);
    if (process.platform !== 'win32') expect(statSync(join(freshDir, DEMO_MARKER)).mode & 0o777).toBe(0o600);
    expect(new EmbeddedServer({ dataDir: freshDir, entry: FAKE_SERVER }).demoCredentials()).toEqual(credentials);

    // A folder with data the console did not seed: the server, whose rule it is, seeds nothing.
    const theirs = dataFolder();
    writeFileSync(join(theirs, 'control.db'), '');
    const other = fake('serve', { dataDir: theirs });
    await other.start();
    expect(other.status().lastLog).not.toContain('fake server: demo data seeded');
    expect(other.status().demoAccount).toBeNull();
    expect(existsSync(join(theirs, DEMO_MARKER))).toBe(false);
  }, 30_000);

  it('offers the demo account after a first start cut off between seeding and announcing', async () => {
    const dataDir = dataFolder();
    const cut = fake('hang', { dataDir, readyTimeoutMs: 1_500 });
    await expect(cut.start()).rejects.toBeInstanceOf(ConsoleError);
    expect(existsSync(join(dataDir, 'control.db'))).toBe(true);
    expect(cut.status().demoAccount).toBeNull();

    // The folder is no longer new, and the console had marked it before asking for the seed.
    const next = fake('serve', { dataDir });
    await next.start();
    expect(next.status().demoAccount).toEqual({ email: 'admin@demo.example' });
    expect(JSON.parse(readFileSync(join(dataDir, DEMO_MARKER), 'utf8'))).toMatchObject({ demo: 'seeded' });
  }, 30_000);

  it('does not outlive a host that is killed outright', async () => {
    const host = spawn(process.execPath, ['--import', 'tsx', FAKE_HOST, dataFolder(), FAKE_SERVER], {
      cwd: root,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    hosts.push(host);
    let output = '';
    host.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    host.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    const pid = Number(await waitFor('the server pid', () => /server pid (\d+)/.exec(output)?.[1]));
    expect(alive(pid)).toBe(true);

    host.kill('SIGKILL');
    await waitFor('the orphaned server to end', () => !alive(pid), 10_000);
  }, 30_000);
});

describe('appDataDir', () => {
  it('follows each platform', () => {
    const home = '/home/ada';
    expect(appDataDir('Gateway Console', { platform: 'linux', env: {}, home })).toBe(
      '/home/ada/.local/share/Gateway Console',
    );
    expect(appDataDir('gc', { platform: 'linux', env: { XDG_DATA_HOME: '/data/xdg' }, home })).toBe('/data/xdg/gc');
    expect(appDataDir('gc', { platform: 'linux', env: { XDG_DATA_HOME: 'relative' }, home })).toBe(
      '/home/ada/.local/share/gc',
    );
    expect(appDataDir('gc', { platform: 'darwin', env: {}, home: '/Users/ada' })).toBe(
      '/Users/ada/Library/Application Support/gc',
    );
    expect(
      appDataDir('gc', {
        platform: 'win32',
        env: { APPDATA: 'C:\\Users\\ada\\AppData\\Roaming' },
        home: 'C:\\Users\\ada',
      }),
    ).toBe('C:\\Users\\ada\\AppData\\Roaming\\gc');
    expect(appDataDir('gc', { platform: 'win32', env: {}, home: 'C:\\Users\\ada' })).toBe(
      'C:\\Users\\ada\\AppData\\Roaming\\gc',
    );
  });
});
