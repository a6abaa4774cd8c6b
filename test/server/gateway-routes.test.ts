import OpenAI, { APIError } from 'openai';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { parseRoutesFile } from '../../server/domain/routes-file.js';
import { Breakers } from '../../server/gateway/breakers.js';
import { buildGateway } from '../../server/gateway/gateway.js';
import { GatewayHealth, REMOTE_TTL_MS } from '../../server/gateway/gateway-health.js';
import { RemoteAuthority } from '../../server/gateway/remote-authority.js';
import { startGateway } from './gateway-harness.js';
import { startFaultUpstream, type FaultUpstream } from './fault-upstream.js';
import { register, startServer, TestClient, type TestServer } from './harness.js';

/**
 * GET /routes: the routes document with each target's live state, from the breakers of the
 * gateway in this process and of one elsewhere (over the internal API), and its last 15 minutes
 * from the rows. Runs on SQLite and on PostgreSQL (vitest's node-postgres project).
 */

vi.setConfig({ testTimeout: 30_000, hookTimeout: 60_000 });

const FLUSH_MS = 50;
const TOKEN = 'gateway-routes-test-token-0123456789abcdef';
const FAILOVER = {
  timeout_ms: 8000,
  answer_timeout_ms: 2000,
  first_byte_timeout_ms: 2000,
  stream_idle_timeout_ms: 2000,
  retries: 1,
  max_attempts: 4,
  backoff_ms: 10,
  retry_after_max_ms: 1000,
  breaker_failures: 3,
  // Open for the whole test, once opened.
  breaker_cooldown_ms: 600_000,
};

let server: TestServer;
let gateway: FastifyInstance;
let gatewayUrl: string;
let alpha: FaultUpstream;
let beta: FaultUpstream;
let owner: TestClient;
let projectId: string;

beforeAll(async () => {
  server = await startServer({ gatewayFlushMs: FLUSH_MS, gatewayTokens: [TOKEN] });
  [alpha, beta] = await Promise.all([startFaultUpstream({ seed: 1 }), startFaultUpstream({ seed: 2 })]);
  ({ gateway, url: gatewayUrl } = await startGateway(server, { byProvider: {}, fallback: null }));
  owner = (await register(server)).client;
  projectId = (await owner.get('/projects')).body.projects[0].id;
});
afterAll(async () => {
  await gateway?.close();
  await Promise.all([alpha?.close(), beta?.close()]);
  await server?.close();
});

interface TargetView {
  provider: string;
  model: string;
  weight: number;
  state: string | null;
  open_until: number | null;
  attempts_15m: number;
  success_rate_15m: number | null;
  p95_ms_15m: number | null;
}
interface RouteView {
  id: string;
  kind: string;
  active: boolean;
  strategy: string;
  price: Record<string, number>;
  targets: TargetView[];
}

/** Applies a route over alpha then beta (with `failover` over the test's bounds), as an operator does. */
async function applyRoute(id: string, a: string, b: string, failover: Partial<typeof FAILOVER> = {}) {
  const stored = await server.app.control.routes.current();
  const checked = parseRoutesFile(
    JSON.stringify({
      failover: { ...FAILOVER, ...failover },
      providers: {
        ...stored.document.providers,
        alpha: { api: 'openai', base_url: alpha.url },
        beta: { api: 'openai', base_url: beta.url },
      },
      routes: {
        ...stored.document.routes,
        [id]: {
          kind: 'chat',
          price: { input: 42, output: 168, cache_write: 42, cache_read: 21 },
          strategy: 'fallback',
          targets: [
            { provider: 'alpha', model: a, weight: 2 },
            { provider: 'beta', model: b },
          ],
        },
      },
    }),
    {},
  );
  if (!checked.ok) throw new Error(JSON.stringify(checked.problems));
  const outcome = await server.app.control.write((tx) => tx.routes.apply(checked.document, 'test', Date.now()));
  if (outcome.kind !== 'applied') throw new Error(JSON.stringify(outcome));
}

async function newKey(): Promise<{ id: string; api_key: string }> {
  const answer = await owner.post('/keys', { project_id: projectId, name: `k${Math.random()}` });
  expect(answer.status, JSON.stringify(answer.body)).toBe(201);
  return answer.body;
}

async function ask(baseURL: string, apiKey: string, model: string) {
  const sdk = new OpenAI({ apiKey, baseURL, maxRetries: 0 });
  try {
    await sdk.chat.completions.create({ model, messages: [{ role: 'user', content: 'hello' }] });
    return 200;
  } catch (error) {
    if (error instanceof APIError) return error.status;
    throw error;
  }
}

async function routes(client: TestClient = owner) {
  const answer = await client.get('/routes');
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  return answer.body as { version: number; applied_at: string; figures_available: boolean; routes: RouteView[] };
}

const routeOf = (body: { routes: RouteView[] }, id: string) => body.routes.find((route) => route.id === id)!;

/** The route's targets once their attempts in the rows number `attempts` in all. */
async function targetsOnceWritten(id: string, attempts: number, client: TestClient = owner): Promise<TargetView[]> {
  for (let tries = 0; tries < 100; tries++) {
    const targets = routeOf(await routes(client), id).targets;
    if (targets.reduce((sum, target) => sum + target.attempts_15m, 0) >= attempts) return targets;
    await new Promise((resolve) => setTimeout(resolve, FLUSH_MS));
  }
  throw new Error(`fewer than ${attempts} attempts on ${id}`);
}

describe('GET /routes', () => {
  it('needs a session', async () => {
    const answer = await new TestClient(server.baseUrl).get('/routes');
    expect(answer.status).toBe(401);
  });

  it("answers the document's newest version: routes, prices, strategy and targets, nothing known yet", async () => {
    const body = await routes();
    const stored = await server.app.control.routes.current();
    expect(body.version).toBe(stored.version);
    expect(Date.parse(body.applied_at)).toBe(stored.applied_at);
    expect(body.figures_available).toBe(true);
    expect(body.routes.map((route) => route.id)).toEqual(Object.keys(stored.document.routes).sort());
    const mini = routeOf(body, 'openai/gpt-4o-mini');
    expect(mini).toMatchObject({ kind: 'chat', active: true, strategy: 'fallback' });
    expect(mini.price).toEqual(stored.document.routes['openai/gpt-4o-mini']!.price);
    expect(mini.targets).toEqual([
      {
        provider: 'openai',
        model: expect.any(String),
        weight: 1,
        state: null,
        open_until: null,
        attempts_15m: 0,
        success_rate_15m: null,
        p95_ms_15m: null,
      },
    ]);
  });

  it("a dead first target: its breaker open until …, the second healthy, each one's figures from the rows", async () => {
    await applyRoute('test/open', 'a-open', 'b-open');
    alpha.script('a-open', [{ kind: 'status', status: 503 }]);
    const key = await newKey();
    // First request: alpha fails, is retried, fails, beta serves; second: alpha's third failure opens it.
    for (let i = 0; i < 4; i++) expect(await ask(gatewayUrl, key.api_key, 'test/open')).toBe(200);
    const before = Date.now();
    const [a, b] = await targetsOnceWritten('test/open', 3 + 4);
    expect(a).toMatchObject({ provider: 'alpha', model: 'a-open', weight: 2, state: 'open' });
    expect(a!.open_until).toBeGreaterThan(before + 500_000);
    expect(a!.attempts_15m).toBe(3);
    expect(a!.success_rate_15m).toBe(0);
    expect(a!.p95_ms_15m).toEqual(expect.any(Number));
    expect(b).toMatchObject({ provider: 'beta', model: 'b-open', state: 'healthy', open_until: null, attempts_15m: 4 });
    expect(b!.success_rate_15m).toBe(1);
    expect(b!.p95_ms_15m).toBeGreaterThanOrEqual(0);
  });

  it('a target whose attempts mostly fail, its breaker never opening: failing, from the rows', async () => {
    await applyRoute('test/failing', 'a-failing', 'b-failing', { retries: 0, breaker_failures: 1000 });
    alpha.script('a-failing', [{ kind: 'status', status: 500 }]);
    const key = await newKey();
    for (let i = 0; i < 3; i++) expect(await ask(gatewayUrl, key.api_key, 'test/failing')).toBe(200);
    const [a, b] = await targetsOnceWritten('test/failing', 6);
    expect(a).toMatchObject({ state: 'failing', open_until: null, attempts_15m: 3, success_rate_15m: 0 });
    expect(b).toMatchObject({ state: 'healthy', attempts_15m: 3, success_rate_15m: 1 });
  });

  it("another organisation sees the breakers but not the first one's traffic", async () => {
    const other = (await register(server)).client;
    const [a, b] = routeOf(await routes(other), 'test/open').targets;
    expect(a).toMatchObject({ state: 'open', attempts_15m: 0, success_rate_15m: null });
    expect(b).toMatchObject({ state: null, attempts_15m: 0 });
  });

  it('a gateway in another process reports its breakers with its rows over the internal API', async () => {
    await applyRoute('test/remote', 'a-remote', 'b-remote');
    alpha.script('a-remote', [{ kind: 'reset' }]);
    const breakers = new Breakers();
    const authority = new RemoteAuthority({
      controlPlane: new URL(server.baseUrl),
      token: TOKEN,
      logger: server.app.log,
      flushMs: FLUSH_MS,
      breakers,
    });
    const remote = buildGateway({
      authority,
      breakers,
      upstreams: { byProvider: {}, fallback: null },
      logger: server.app.log,
      now: Date.now,
    });
    await remote.listen({ host: '127.0.0.1', port: 0 });
    try {
      const address = remote.server.address();
      const url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/v1`;
      const key = await newKey();
      for (let i = 0; i < 3; i++) expect(await ask(url, key.api_key, 'test/remote')).toBe(200);
      const [a, b] = await targetsOnceWritten('test/remote', 3 + 3);
      expect(a).toMatchObject({ state: 'open', attempts_15m: 3 });
      expect(a!.open_until).toBeGreaterThan(Date.now());
      expect(b).toMatchObject({ state: 'healthy', attempts_15m: 3 });
    } finally {
      await remote.close();
    }
    // The gateway stopped reporting: two minutes on, its view is no longer taken.
    server.advance(REMOTE_TTL_MS + 1000);
    const [a] = routeOf(await routes(), 'test/remote').targets;
    expect(a!.state).not.toBe('open');
  });
});

describe('GatewayHealth', () => {
  it('the worst of its views, remote ones only while recent, local ones until detached', () => {
    let now = 1_000_000;
    const health = new GatewayHealth(() => now);
    const detach = health.attach('here', {
      view: () => [{ target: 'p/a', state: 'half_open', failures: 4, open_until: 5 }],
    });
    health.report('there', [{ target: 'p/b', state: 'open', failures: 3, open_until: now + 10_000 }]);
    expect(health.views().map((view) => view.target)).toEqual(['p/a', 'p/b']);
    now += REMOTE_TTL_MS + 1;
    expect(health.views().map((view) => view.target)).toEqual(['p/a']);
    detach();
    expect(health.views()).toEqual([]);
  });
});
