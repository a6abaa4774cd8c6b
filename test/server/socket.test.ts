import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, lstatSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Writable } from 'node:stream';
import { CookieJar } from 'tough-cookie';
import { Agent, request } from 'undici';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { buildApp, type App } from '../../server/app.js';
import { resolveConfig } from '../../server/config.js';
import { clearStaleSocket } from '../../server/local-socket.js';
import { EMBEDDED_ADDRESS } from '../../server/schemas/embedded-names.js';
import { configFromArgs } from '../../server/serve.js';
import { PASSWORD, unique } from './harness.js';

/**
 * `serve --socket PATH`: the embedded server's door, a Unix socket instead of a TCP port.
 * Requests go over the socket with undici's Agent, as the console's host sends them.
 */

const root = resolve(import.meta.dirname, '../..');
const folders: string[] = [];
const cleanups: (() => Promise<unknown> | void)[] = [];

function folder(): string {
  const made = mkdtempSync(join(tmpdir(), 'gc-socket-'));
  folders.push(made);
  return made;
}

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});
afterAll(() => {
  for (const made of folders.splice(0)) rmSync(made, { recursive: true, force: true });
});

/** GET or POST over the socket at `socketPath`, naming `host` in the Host header, with a cookie jar. */
function socketClient(socketPath: string, host = 'localhost') {
  const dispatcher = new Agent({ connect: { socketPath } });
  cleanups.push(() => dispatcher.close());
  const jar = new CookieJar();
  return async (method: 'GET' | 'POST', path: string, body?: unknown) => {
    const url = `${EMBEDDED_ADDRESS}${path}`;
    const headers: Record<string, string> = { host };
    const cookie = await jar.getCookieString(url);
    if (cookie) headers.cookie = cookie;
    if (body !== undefined) headers['content-type'] = 'application/json';
    const response = await request(url, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      dispatcher,
    });
    const setCookie = response.headers['set-cookie'];
    for (const line of Array.isArray(setCookie) ? setCookie : setCookie ? [setCookie] : []) {
      await jar.setCookie(line, url);
    }
    const text = await response.body.text();
    return { status: response.statusCode, body: (text ? JSON.parse(text) : undefined) as Record<string, unknown> };
  };
}

describe('the socket settings', () => {
  it('takes --socket or SVC_SOCKET as an absolute path, a named pipe as it is, and never with --host or --port', () => {
    expect(configFromArgs(['--socket', 'run/control.sock'], {}).socket).toBe(resolve('run/control.sock'));
    expect(configFromArgs([], { SVC_SOCKET: '/run/gc/control.sock' }).socket).toBe('/run/gc/control.sock');
    expect(configFromArgs([], { SVC_SOCKET: '' }).socket).toBeUndefined();
    expect(configFromArgs(['--socket', '\\\\.\\pipe\\gateway-console-x'], {}).socket).toBe(
      '\\\\.\\pipe\\gateway-console-x',
    );
    expect(() => configFromArgs(['--socket', 'a.sock', '--port', '8787'], {})).toThrow(/drop --host and --port/);
    expect(() => configFromArgs(['--host', '127.0.0.1'], { SVC_SOCKET: 'a.sock' })).toThrow(/drop --host and --port/);
    expect(() => configFromArgs(['--socket', ''], {})).toThrow(/--socket needs a path/);
  });
});

describe('clearing the way for a socket', () => {
  it('removes a socket nothing answers on, and lets a missing one be', async () => {
    const path = join(folder(), 'control.sock');
    await clearStaleSocket(path);
    // A server killed outright leaves its socket file behind (a clean close removes it).
    const child = spawn(process.execPath, ['-e', `require('net').createServer().listen(${JSON.stringify(path)})`]);
    await waitFor(() => existsSync(path));
    const killed = new Promise((done) => child.once('exit', done));
    child.kill('SIGKILL');
    await killed;
    expect(lstatSync(path).isSocket()).toBe(true);

    await clearStaleSocket(path);
    expect(existsSync(path)).toBe(false);
  });

  it('refuses, and keeps, a file that is not a socket', async () => {
    const path = join(folder(), 'control.sock');
    writeFileSync(path, 'precious');
    await expect(clearStaleSocket(path)).rejects.toThrow(/not a socket is there; not removing it/);
    expect(readFileSync(path, 'utf8')).toBe('precious');
  });

  it('refuses a socket another server answers on', async () => {
    const path = join(folder(), 'control.sock');
    const live: Server = createServer((connection) => connection.end());
    await new Promise<void>((done) => live.listen(path, done));
    cleanups.push(() => new Promise<void>((done) => live.close(() => done())));
    await expect(clearStaleSocket(path)).rejects.toThrow(/another server is listening on it/);
    expect(lstatSync(path).isSocket()).toBe(true);
  });
});

describe('a control plane on a socket', () => {
  async function socketApp(host: string): Promise<{ app: App; socket: string }> {
    const dataDir = folder();
    const socket = join(dataDir, 'control.sock');
    const quiet = new Writable({ write: (_chunk, _encoding, done) => done() });
    const config = resolveConfig({ dataDir, socket, host, passwordCost: 10 });
    const app = await buildApp(config, { logDestination: quiet });
    cleanups.push(() => app.close());
    await app.listen({ path: socket });
    return { app, socket };
  }

  it('binds a path, not a port, and answers the API over it: sign-up, session, the OpenAPI document', async () => {
    const { app, socket } = await socketApp('127.0.0.1');
    expect(app.server.address()).toBe(socket);
    const send = socketClient(socket);

    expect((await send('GET', '/openapi.json')).status).toBe(200);
    const { email, org } = unique('socket');
    const registered = await send('POST', '/auth/register', { email, password: PASSWORD, organization_name: org });
    expect(registered.status).toBe(201);
    expect(await send('GET', '/auth/me')).toMatchObject({ status: 200, body: { email } });
  });

  it('is local-only whatever its host setting: a request must name a loopback host', async () => {
    // A host that is no loopback address would turn the Host check off for a TCP server.
    const { socket } = await socketApp('0.0.0.0');
    expect((await socketClient(socket, 'localhost')('GET', '/openapi.json')).status).toBe(200);
    expect((await socketClient(socket, '127.0.0.1')('GET', '/openapi.json')).status).toBe(200);
    const rebound = await socketClient(socket, 'attacker.example')('GET', '/openapi.json');
    expect(rebound.status).toBe(403);
  });
});

describe('npm run server -- --socket', { timeout: 120_000 }, () => {
  it('listens on the socket alone, owner-only, says so, and answers there', async () => {
    const dataDir = folder();
    const socket = join(dataDir, 'control.sock');
    const env: NodeJS.ProcessEnv = {};
    for (const [name, value] of Object.entries(process.env)) if (!name.startsWith('SVC_')) env[name] = value;
    // Node with tsx's loader rather than the tsx command, so that a SIGKILL reaches the server itself.
    const child: ChildProcess = spawn(
      process.execPath,
      ['--import', 'tsx', 'server/cli.ts', 'serve', '--socket', socket, '--data-dir', dataDir],
      { cwd: root, env: { ...env, SVC_PASSWORD_COST: '10' }, stdio: 'pipe' },
    );
    cleanups.push(() => {
      if (child.exitCode === null) child.kill('SIGKILL');
    });
    let output = '';
    child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    await waitFor(
      () => output.includes(`Control plane listening on the socket ${socket}`) || child.exitCode !== null,
      60_000,
    );
    expect(output).toContain(`Control plane listening on the socket ${socket}`);
    expect(output).not.toMatch(/listening at http/);

    if (process.platform !== 'win32') expect(lstatSync(socket).mode & 0o777).toBe(0o600);
    expect((await socketClient(socket)('GET', '/openapi.json')).status).toBe(200);

    const exited = new Promise((done) => child.once('exit', (code) => done(code)));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    // A clean stop takes its socket with it.
    expect(existsSync(socket)).toBe(false);
  });
});

async function waitFor(check: () => boolean, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((done) => setTimeout(done, 50));
  }
}
