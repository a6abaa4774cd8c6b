import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createConnection, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import OpenAI from 'openai';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { TestClient } from './harness.js';

/** `npm run server` as an operator runs it: tsx on server/cli.ts, in its own process. */

const root = resolve(import.meta.dirname, '../..');
const dataDir = mkdtempSync(join(tmpdir(), 'gc-cli-'));

interface Running {
  child: ChildProcess;
  output: () => string;
  stderr: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const started: Running[] = [];

function environment(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) if (!name.startsWith('SVC_')) env[name] = value;
  // A cheaper password hash keeps the demo seed quick on a small machine.
  env.SVC_PASSWORD_COST = '12';
  return env;
}

function run(args: string[], extraEnv: NodeJS.ProcessEnv = {}): Running {
  // What the tsx command runs, minus its own process: a signal, SIGKILL included, reaches the server.
  const child = spawn(process.execPath, ['--import', 'tsx', 'server/cli.ts', ...args], {
    cwd: root,
    env: { ...environment(), ...extraEnv },
    stdio: 'pipe',
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) =>
    child.once('exit', (code, signal) => done({ code, signal })),
  );
  const running = { child, output: () => stdout, stderr: () => stderr, exited };
  started.push(running);
  return running;
}

/** Polls `check` every 50 ms until it returns a value, or fails after `ms`. */
async function waitFor<T>(what: string, check: () => T | undefined | null, ms = 60_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = check();
    if (value !== undefined && value !== null) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function exitWithin(running: Running, ms: number) {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, fail) => {
    timer = setTimeout(() => fail(new Error(`process did not exit within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([running.exited, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((done) => probe.listen(0, '127.0.0.1', done));
  const address = probe.address();
  await new Promise<void>((done) => probe.close(() => done()));
  if (!address || typeof address === 'string') throw new Error('no port');
  return address.port;
}

function portAccepts(port: number): Promise<boolean> {
  return new Promise((done) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      done(true);
    });
    socket.once('error', () => done(false));
  });
}

function credentials(output: string): { role: string; email: string; password: string }[] {
  return [...output.matchAll(/^\s+(owner|admin|member)\s+(\S+@\S+)\s+(\S+)\s*$/gm)].map((m) => ({
    role: m[1]!,
    email: m[2]!,
    password: m[3]!,
  }));
}

afterEach(async () => {
  for (const running of started.splice(0)) {
    if (running.child.exitCode === null && running.child.signalCode === null) {
      running.child.kill('SIGTERM');
      await exitWithin(running, 5_000).catch(() => running.child.kill('SIGKILL'));
    }
  }
});
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

// Each case spawns tsx processes (seconds each on two busy cores), and --demo seeds 50,000 rows.
describe('npm run server', { timeout: 120_000 }, () => {
  let printed: { role: string; email: string; password: string }[] = [];

  it('with --demo prints its address and the demo credentials, which sign in; SIGTERM stops it with 0', async () => {
    const port = await freePort();
    const server = run(['serve', '--port', String(port), '--data-dir', dataDir, '--demo']);
    const base = await waitFor('the listening line', () => {
      const match = /(http:\/\/127\.0\.0\.1:(\d+)\/api)\b/.exec(server.output());
      if (match) return match[1];
      if (server.child.exitCode !== null) throw new Error(`server exited early: ${server.stderr()}`);
      return undefined;
    });
    expect(base).toBe(`http://127.0.0.1:${port}/api`);

    printed = credentials(server.output());
    expect(printed.map((c) => c.role).sort()).toEqual(['admin', 'member', 'owner']);
    for (const account of printed) {
      const client = new TestClient(base!);
      const signedIn = await client.post('/auth/login', { email: account.email, password: account.password });
      expect(signedIn.status).toBe(200);
      const me = await client.get('/auth/me');
      expect(me.body).toMatchObject({ email: account.email, role: account.role });
      const keys = await client.get('/keys');
      expect(keys.status).toBe(200);
      expect(keys.body.keys.length).toBeGreaterThan(0);
    }

    server.child.kill('SIGTERM');
    expect(await exitWithin(server, 15_000)).toEqual({ code: 0, signal: null });
    expect(await portAccepts(port)).toBe(false);
  });

  it('restarted on the same data folder keeps the demo data without re-seeding; SIGINT stops it with 0', async () => {
    expect(printed.length).toBeGreaterThan(0);
    const port = await freePort();
    const server = run(['serve', '--port', String(port), '--data-dir', dataDir, '--demo']);
    await waitFor('the listening line', () => server.output().includes(`http://127.0.0.1:${port}/api`) || null);
    expect(credentials(server.output())).toEqual([]);

    const owner = printed.find((c) => c.role === 'owner')!;
    const client = new TestClient(`http://127.0.0.1:${port}/api`);
    expect((await client.post('/auth/login', { email: owner.email, password: owner.password })).status).toBe(200);
    const projects = (await client.get('/projects')).body.projects;
    expect(projects.length).toBeGreaterThan(0);

    server.child.kill('SIGINT');
    expect(await exitWithin(server, 15_000)).toEqual({ code: 0, signal: null });
    expect(await portAccepts(port)).toBe(false);
  });

  it('with --gateway-port serves the OpenAI API, on the simulated upstream in a demo, to a key made in the API', async () => {
    expect(printed.length).toBeGreaterThan(0);
    const [port, gatewayPort] = [await freePort(), await freePort()];
    // The demo's live traffic brings its story's outage (gpt-4o-mini down minutes 20–24 of each
    // hour): without it, this request's answer does not depend on the hour the test runs at.
    const server = run(
      ['serve', '--port', String(port), '--gateway-port', String(gatewayPort), '--data-dir', dataDir, '--demo'],
      { SVC_DEMO_TRAFFIC: '0' },
    );
    const gatewayUrl = await waitFor('the gateway line', () => {
      const match = /Gateway listening at (http:\/\/127\.0\.0\.1:\d+\/v1) \(upstream: the simulated one/.exec(
        server.output(),
      );
      if (server.child.exitCode !== null) throw new Error(`server exited early: ${server.stderr()}`);
      return match?.[1];
    });
    expect(gatewayUrl).toBe(`http://127.0.0.1:${gatewayPort}/v1`);

    const admin = printed.find((c) => c.role === 'admin')!;
    const client = new TestClient(`http://127.0.0.1:${port}/api`);
    expect((await client.post('/auth/login', { email: admin.email, password: admin.password })).status).toBe(200);
    const projectId = (await client.get('/projects')).body.projects[0].id;
    const key = (await client.post('/keys', { project_id: projectId, name: 'sdk from the cli test' })).body;
    const openai = new OpenAI({ apiKey: key.api_key, baseURL: gatewayUrl, maxRetries: 0 });
    const answer = await openai.chat.completions.create({
      model: 'openai/gpt-4o-mini',
      messages: [{ role: 'user', content: 'Hello from the command line test.' }],
    });
    expect(answer.choices[0]?.message.content?.length).toBeGreaterThan(0);

    server.child.kill('SIGTERM');
    expect(await exitWithin(server, 15_000)).toEqual({ code: 0, signal: null });
    expect(await portAccepts(gatewayPort)).toBe(false);
    // Its row was written before the stores closed.
    const again = run(['serve', '--port', String(port), '--data-dir', dataDir]);
    await waitFor('the listening line', () => again.output().includes(`http://127.0.0.1:${port}/api`) || null);
    const reader = new TestClient(`http://127.0.0.1:${port}/api`);
    expect((await reader.post('/auth/login', { email: admin.email, password: admin.password })).status).toBe(200);
    const page = await reader.get(`/analytics/requests?key_id=${key.id}&time_range=1h`);
    expect(page.body.requests.map((row: { status: number }) => row.status)).toEqual([200]);
  });

  it('bad flags or an unknown mode exit non-zero with a message', async () => {
    const cases: [string[], RegExp][] = [
      [['serve', '--port', 'eighty', '--data-dir', dataDir], /--port must be a port number, not "eighty"/],
      [['serve', '--bogus', '--data-dir', dataDir], /bogus/],
      // Announcing is for a host that started the server with a channel to hear it on.
      [['serve', '--announce', '--port', '0', '--data-dir', dataDir], /--announce needs a parent process/],
      [['launch'], /usage/],
      // The address may carry a password: the message names the flag, never what was given.
      [
        ['serve', '--database-url', 'mysql://root:hunter2@db/x', '--data-dir', dataDir],
        /--database-url must be a postgres:\/\/ address/,
      ],
      // Demo data with published passwords never goes into a shared database by accident.
      [
        ['serve', '--demo', '--database-url', 'postgres://u:p@127.0.0.1:1/x', '--data-dir', dataDir],
        /--demo seeds a new data folder, not a PostgreSQL database/,
      ],
      [['admin', 'deposit', '--database-url', 'mysql://root:hunter2@db/x', '--data-dir', dataDir], /--database-url/],
      [['serve', 'postgres://root:hunter2@db/x', '--data-dir', dataDir], /unexpected argument/],
      [
        ['serve', '--retention-days', 'abc', '--data-dir', dataDir],
        /--retention-days must be a whole number of days from 1 to 36500, not "abc"/,
      ],
      [['serve', '--retention-days', '0', '--data-dir', dataDir], /--retention-days must be a whole number of days/],
    ];
    // Started together: each is a separate tsx start-up.
    const outcomes = await Promise.all(
      cases.map(async ([args, message]) => {
        const running = run(args);
        const { code } = await exitWithin(running, 60_000);
        return { args, code, message, stderr: running.stderr(), stdout: running.output() };
      }),
    );
    for (const { args, code, message, stderr, stdout } of outcomes) {
      expect({ args, failed: code !== 0 && code !== null }).toEqual({ args, failed: true });
      expect(stderr).toMatch(message);
      expect(stderr + stdout).not.toContain('hunter2');
      expect(stdout).not.toContain('listening');
    }
  });
});
