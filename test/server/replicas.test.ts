import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAdmin } from '../../server/admin/commands.js';
import { freshDatabase } from '../postgres/database.js';
import { PASSWORD, TestClient, unique } from './harness.js';

/**
 * Three control planes as an operator runs them, `npm run server` processes on one PostgreSQL
 * database, each with its own gateway, behind no sticky routing: a caller may reach any of them.
 */

const root = resolve(import.meta.dirname, '../..');
const REFRESH = 'svc_refresh_token';

interface Replica {
  child: ChildProcess;
  api: string;
  gateway: string;
  output: () => string;
  exited: Promise<unknown>;
}

let database: Awaited<ReturnType<typeof freshDatabase>>;
const folders: string[] = [];
const replicas: Replica[] = [];
// The secrets every replica shares: keys hashed on one must verify on the others.
const secrets = {
  SVC_VAULT_MASTER_KEY: randomBytes(32).toString('base64'),
  SVC_KEY_HASH_SECRET: randomBytes(32).toString('base64'),
};

async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((done) => probe.listen(0, '127.0.0.1', done));
  const { port } = probe.address() as { port: number };
  await new Promise<void>((done) => probe.close(() => done()));
  return port;
}

async function startReplica(): Promise<Replica> {
  const [port, gatewayPort] = [await freePort(), await freePort()];
  const dataDir = mkdtempSync(join(tmpdir(), 'gc-replica-'));
  folders.push(dataDir);
  // Both stores in the one database: every replica writes its gateway's rows there and reads everyone's.
  const env: NodeJS.ProcessEnv = {
    ...secrets,
    SVC_PASSWORD_COST: '10',
    SVC_DATABASE_URL: database.url,
    SVC_TELEMETRY_URL: database.url,
  };
  for (const [name, value] of Object.entries(process.env)) if (!name.startsWith('SVC_')) env[name] ??= value;
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', 'server/cli.ts', 'serve', '--port', String(port), '--gateway-port', String(gatewayPort)].concat(
      ['--simulated-upstream', '--data-dir', dataDir],
    ),
    { cwd: root, env, stdio: 'pipe' },
  );
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  const exited = new Promise((done) => child.once('exit', done));
  for (let waited = 0; !output.includes('Gateway listening'); waited += 50) {
    if (child.exitCode !== null || waited > 60_000) {
      child.kill('SIGKILL');
      throw new Error(`replica did not start: ${output}`);
    }
    await new Promise((done) => setTimeout(done, 50));
  }
  return {
    child,
    api: `http://127.0.0.1:${port}/api`,
    gateway: `http://127.0.0.1:${gatewayPort}/v1`,
    output: () => output,
    exited,
  };
}

/** The same caller (one cookie jar) on replica `i`. */
const on = (client: TestClient, i: number) => new TestClient(replicas[i]!.api, client.jar);

async function signedUp(): Promise<{ client: TestClient; projectId: string }> {
  const fresh = unique('replica');
  const client = new TestClient(replicas[0]!.api);
  const answer = await client.post('/auth/register', {
    email: fresh.email,
    password: PASSWORD,
    organization_name: fresh.org,
  });
  expect(answer.status).toBe(201);
  return { client, projectId: (await client.get('/projects')).body.projects[0].id };
}

async function chat(gateway: string, apiKey: string, content = 'Hi.'): Promise<number> {
  const openai = new OpenAI({ apiKey, baseURL: gateway, maxRetries: 0 });
  try {
    await openai.chat.completions.create({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content }] });
    return 200;
  } catch (error) {
    if (error instanceof OpenAI.APIError && error.status !== undefined) return error.status;
    throw error;
  }
}

// Each replica is a tsx start-up: seconds each on two busy cores.
describe('three replicas on one PostgreSQL database', { timeout: 120_000 }, () => {
  beforeAll(async () => {
    database = await freshDatabase();
    // The first migrates the new database; the other two start together on it.
    replicas.push(await startReplica());
    replicas.push(...(await Promise.all([startReplica(), startReplica()])));
  }, 180_000);

  afterAll(async () => {
    for (const replica of replicas) {
      if (replica.child.exitCode === null && replica.child.signalCode === null) replica.child.kill('SIGKILL');
      await replica.exited;
    }
    for (const folder of folders) rmSync(folder, { recursive: true, force: true });
    await database?.drop();
  });

  it('a session made on one is valid on the others, and ends on all of them at logout on one', async () => {
    const { client } = await signedUp();
    for (const i of [1, 2]) expect((await on(client, i).get('/auth/me')).status).toBe(200);
    // Logging out clears the jar's cookies: the token is sent again by hand, as a copy of it would be.
    const access = (await client.cookie('svc_access_token', '/auth/me'))!;
    const holder = (i: number) =>
      new TestClient(replicas[i]!.api).call('GET', '/auth/me', undefined, { cookie: `svc_access_token=${access}` });
    expect((await holder(0)).status).toBe(200);
    expect((await on(client, 2).post('/auth/logout')).status).toBeLessThan(300);
    for (const i of [0, 1]) expect((await holder(i)).status).toBe(401);
  });

  it('a refresh token rotated on one is refused as reused on another, which ends the session everywhere', async () => {
    const { client } = await signedUp();
    const stolen = (await client.cookie(REFRESH))!;
    expect((await on(client, 1).post('/auth/refresh')).status).toBe(200);
    const replay = await new TestClient(replicas[2]!.api).call('POST', '/auth/refresh', undefined, {
      cookie: `${REFRESH}=${stolen}`,
    });
    expect(replay.status).toBe(401);
    for (const i of [0, 1, 2]) expect((await on(client, i).get('/auth/me')).status).toBe(401);
  });

  it('a key revoked on one is refused by every gateway on its next request; no replica lists it after', async () => {
    const { client, projectId } = await signedUp();
    const key = (await on(client, 0).post('/keys', { project_id: projectId, name: 'replicated' })).body;
    for (const replica of replicas) expect(await chat(replica.gateway, key.api_key)).toBe(200);
    const listed = async (i: number) =>
      ((await on(client, i).get('/keys')).body.keys as { id: string }[]).some((k) => k.id === key.id);
    for (const i of [0, 1, 2]) expect(await listed(i)).toBe(true);

    expect((await on(client, 1).delete(`/keys/${key.id}`)).status).toBe(200);
    for (const replica of replicas) expect(await chat(replica.gateway, key.api_key)).toBe(401);
    for (const i of [0, 1, 2]) expect(await listed(i)).toBe(false);
  });

  it("a key's rate limit holds across every gateway, not once per replica", async () => {
    const { client, projectId } = await signedUp();
    const key = (await on(client, 0).post('/keys', { project_id: projectId, name: 'rated' })).body;
    expect((await on(client, 1).patch(`/keys/${key.id}`, { rate_limit_rpm: 4 })).status).toBe(200);
    // Four callers on each gateway at once: twelve requests against four a minute.
    const statuses = await Promise.all(
      replicas.flatMap((replica) => [0, 1, 2, 3].map(() => chat(replica.gateway, key.api_key))),
    );
    expect(statuses.filter((status) => status === 200)).toHaveLength(4);
    expect(statuses.filter((status) => status === 429)).toHaveLength(8);
  });

  it("a key's credit is held across every gateway: concurrent requests overshoot it by one request at most", async () => {
    const { client, projectId } = await signedUp();
    const key = (await on(client, 0).post('/keys', { project_id: projectId, name: 'credited', credit_limit_cents: 1 }))
      .body;
    // A request holds its largest possible cost until answered, then its cost until its row's spend
    // settles: a prompt of ~1,000 tokens costs more than the cent alone, so none is admitted after it.
    const prompt = 'How much does a long prompt cost? '.repeat(120);
    const statuses = await Promise.all(
      replicas.flatMap((replica) => [0, 1].map(() => chat(replica.gateway, key.api_key, prompt))),
    );
    expect(statuses.filter((status) => status === 200)).toHaveLength(1);
    expect(statuses.filter((status) => status === 402)).toHaveLength(5);
  });

  it("every replica's request log, analytics and key list see every gateway's requests", async () => {
    const { client, projectId } = await signedUp();
    const key = (await on(client, 0).post('/keys', { project_id: projectId, name: 'seen-everywhere' })).body;
    for (const replica of replicas) {
      for (const _ of [0, 1]) expect(await chat(replica.gateway, key.api_key)).toBe(200);
    }
    // Each gateway's rows are written within its server's next flush.
    const logged = async (i: number) =>
      (await on(client, i).get(`/analytics/requests?time_range=1h&key_id=${key.id}`)).body.total as number;
    for (let waited = 0; (await logged(0)) < 6 && waited < 10_000; waited += 100) {
      await new Promise((done) => setTimeout(done, 100));
    }
    for (const i of [0, 1, 2]) {
      expect(await logged(i)).toBe(6);
      const summary = await on(client, i).get(`/analytics/summary?time_range=1h&key_id=${key.id}`);
      expect(summary.body.total_requests).toBe(6);
    }
    // A key's last use is kept a second per server.
    await new Promise((done) => setTimeout(done, 1_100));
    for (const i of [0, 1, 2]) {
      const listed = (
        (await on(client, i).get('/keys')).body.keys as { id: string; last_used_at: string | null }[]
      ).find((k) => k.id === key.id);
      expect(listed?.last_used_at).not.toBeNull();
    }
  });

  it('a replica killed mid-write loses nothing it acknowledged, and the trail still verifies', async () => {
    const { client, projectId } = await signedUp();
    const doomed = replicas.pop()!;
    const acknowledged: string[] = [];
    let cut = 0;
    // Four callers writing without pause, so that writes are under way when the kill lands.
    const caller = async (n: number) => {
      for (let i = 0; ; i++) {
        try {
          const answer = await new TestClient(doomed.api, client.jar).post('/keys', {
            project_id: projectId,
            name: `burst-${n}-${i}`,
          });
          if (answer.status !== 201) throw new Error(`answered ${answer.status}`);
          acknowledged.push(answer.body.id as string);
          if (acknowledged.length === 10) doomed.child.kill('SIGKILL');
        } catch {
          cut += 1;
          return;
        }
      }
    };
    await Promise.all([0, 1, 2, 3].map(caller));
    await doomed.exited;
    expect(acknowledged.length).toBeGreaterThanOrEqual(10);
    expect(cut).toBe(4);
    const stored = new Set(((await on(client, 0).get('/keys')).body.keys as { id: string }[]).map((k) => k.id));
    for (const id of acknowledged) expect(stored.has(id)).toBe(true);
    // Each stored key committed with its event, and the trail is one unbroken chain.
    const events = await new TestClient(replicas[1]!.api, client.jar).get('/activity?limit=100');
    const created = (events.body.events as { action: string }[]).filter((e) => e.action === 'api_key.created');
    expect(created).toHaveLength(stored.size);
    const verified: string[] = [];
    const code = await runAdmin(
      ['verify-activity', '--data-dir', folders[0]!, '--database-url', database.url],
      (line) => verified.push(line),
    );
    expect({ code, verified }).toEqual({
      code: 0,
      verified: expect.arrayContaining([expect.stringMatching(/every chain holds/)]),
    });
  });
});
