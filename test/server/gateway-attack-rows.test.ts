import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startSimulatedUpstream, type SimulatedUpstream } from '../../server/gateway/simulated-upstream.js';
import { startGateway, type TestGateway } from './gateway-harness.js';
import { startGatewayProcess, type GatewayProcess } from './gateway-process-harness.js';
import { register, runOperator, startServer, type TestClient, type TestServer } from './harness.js';

/**
 * Issue 51, the rows' side: calls a caller shapes to lose their row or charge (a long User-Agent,
 * a long model name, `n: 1e308`, JSON nested 100,000 deep), short bodies that cost many tokens,
 * and a revoked key told apart from an unknown one. Each through the gateway in the control
 * plane's process and through one in a process of its own (`npm run gateway`), rows and spend
 * read back from the request log afterwards.
 */

vi.setConfig({ testTimeout: 60_000, hookTimeout: 120_000 });

const TOKEN = 'gw-attack-rows-token-0123456789abcdef0123456789';
const FLUSH_MS = 50;
/** What the costly upstream says every request's prompt was: far more tokens than its bytes. */
const COSTLY_PROMPT_TOKENS = 3000;

/**
 * An OpenAI-compatible upstream that counts 3,000 prompt tokens for any body, as a provider does
 * for an image behind a short URL, or one whose own system prompt the caller never sees.
 */
async function startCostlyUpstream(): Promise<{ url: string; close: () => Promise<void> }> {
  const server: Server = createServer((incoming, answer) => {
    incoming.resume();
    incoming.on('end', () => {
      answer.writeHead(200, { 'content-type': 'application/json' });
      answer.end(
        JSON.stringify({
          id: 'chatcmpl-costly',
          object: 'chat.completion',
          created: 0,
          model: 'gpt-4o-mini-2024-07-18',
          choices: [{ index: 0, message: { role: 'assistant', content: 'Seen.' }, finish_reason: 'stop' }],
          usage: { prompt_tokens: COSTLY_PROMPT_TOKENS, completion_tokens: 2, total_tokens: COSTLY_PROMPT_TOKENS + 2 },
        }),
      );
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    close: () =>
      new Promise((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
}

let server: TestServer;
let upstream: SimulatedUpstream;
let costly: { url: string; close: () => Promise<void> };
let inProcess: TestGateway;
let inProcessCostly: TestGateway;
let separate: GatewayProcess;
let separateCostly: GatewayProcess;
let owner: { client: TestClient; org: string };
let projectId: string;
let origin: string;

beforeAll(async () => {
  server = await startServer({ gatewayTokens: [TOKEN], gatewayFlushMs: FLUSH_MS });
  origin = new URL(server.baseUrl).origin;
  upstream = await startSimulatedUpstream({ seed: 1 });
  costly = await startCostlyUpstream();
  [separate, separateCostly] = await Promise.all([
    startGatewayProcess(origin, { SVC_GATEWAY_TOKEN: TOKEN, SVC_UPSTREAM_URL: upstream.url }),
    startGatewayProcess(origin, { SVC_GATEWAY_TOKEN: TOKEN, SVC_UPSTREAM_URL: costly.url }),
  ]);
  inProcess = await startGateway(server, { byProvider: {}, fallback: { baseUrl: upstream.url, apiKey: null } });
  inProcessCostly = await startGateway(server, { byProvider: {}, fallback: { baseUrl: costly.url, apiKey: null } });
  owner = await register(server);
  projectId = (await owner.client.get('/projects')).body.projects[0].id;
  await runOperator(server, 'deposit', '--org', owner.org, '--pkr', '100');
});

afterAll(async () => {
  separate?.child.kill('SIGKILL');
  separateCostly?.child.kill('SIGKILL');
  await inProcess?.gateway.close();
  await inProcessCostly?.gateway.close();
  await upstream?.close();
  await costly?.close();
  await server?.close();
});

type Where = 'in the server process' | 'in a process of its own';
const WHERE: Where[] = ['in the server process', 'in a process of its own'];
const gatewayUrl = (where: Where) => (where === 'in the server process' ? inProcess.url : separate.url);
const costlyUrl = (where: Where) => (where === 'in the server process' ? inProcessCostly.url : separateCostly.url);

async function newKey(fields: Record<string, unknown> = {}): Promise<{ id: string; api_key: string }> {
  const answer = await owner.client.post('/keys', { project_id: projectId, name: `k${Math.random()}`, ...fields });
  expect(answer.status).toBe(201);
  return answer.body;
}

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

const HELLO = { model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'Hi.' }] };

/** A chat completion through `gateway`, its body written as given (a string goes as it is). */
async function chat(
  gateway: string,
  secret: string,
  body: Record<string, unknown> | string = HELLO,
  headers: Record<string, string> = {},
): Promise<Answer> {
  const answer = await request(`${gateway}/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: answer.statusCode, headers: answer.headers, text: await answer.body.text() };
}

interface Row {
  req_id: string;
  status: number;
  model: string;
  user_agent: string;
  financials: { cost_pkr: number };
  upstream: { model: string; provider?: string | null; attempts?: unknown[] | null } | null;
  api?: string | null;
}

const costOf = (row: Row) => Math.round(row.financials.cost_pkr * 1e6);

/** The key's rows once `count` are in the request log, or as many as there are after fifteen seconds. */
async function rowsOf(keyId: string, count: number, extra = ''): Promise<Row[]> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const page = await owner.client.get(`/analytics/requests?time_range=1h&limit=200&key_id=${keyId}${extra}`);
    expect(page.status).toBe(200);
    if (page.body.requests.length >= count || Date.now() > deadline) return page.body.requests;
    await new Promise((done) => setTimeout(done, FLUSH_MS));
  }
}

/** The key's settled spend (micro-PKR) once it is `expected`, or as it stands after fifteen seconds. */
async function settledSpend(keyId: string, expected: number): Promise<number> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const throttling = await owner.client.get('/admin/usage-throttling?time_range=1h');
    const spent: number = throttling.body.keys.find((key: { id: string }) => key.id === keyId).spent_cents;
    if (spent === expected || Date.now() > deadline) return spent;
    await new Promise((done) => setTimeout(done, FLUSH_MS));
  }
}

const internal = async (path: string, body: unknown) => {
  const answer = await request(`${origin}/internal/gateway${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: answer.statusCode, body: (await answer.body.json()) as Record<string, unknown> };
};

describe('defect 1: a User-Agent longer than 4,096 characters', () => {
  it.each(WHERE)('costs no call its row or its charge, %s', async (where) => {
    const key = await newKey();
    const long = { 'user-agent': 'u'.repeat(4097) };
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, index) => chat(gatewayUrl(where), key.api_key, HELLO, index % 2 ? long : {})),
    );
    expect(answers.map((answer) => answer.status)).toEqual(Array(20).fill(200));
    const rows = await rowsOf(key.id, 20);
    expect(rows).toHaveLength(20);
    const agents = rows.map((row) => row.user_agent.length).sort((a, b) => a - b);
    expect(agents.at(-1)).toBe(4096);
    const cost = rows.reduce((sum, row) => sum + costOf(row), 0);
    expect(cost).toBeGreaterThan(0);
    expect(await settledSpend(key.id, cost)).toBe(cost);
  });

  it.each(WHERE)('charges a key with a small credit limit until it is spent, %s', async (where) => {
    const key = await newKey();
    const patched = await owner.client.patch(`/keys/${key.id}`, { rate_limit_rpm: 10_000, credit_limit_pkr: 0.05 });
    expect(patched.status).toBe(200);
    const codes: number[] = [];
    const dear = { ...HELLO, max_tokens: 400 };
    for (let call = 0; call < 60 && !codes.includes(402); call++) {
      codes.push((await chat(gatewayUrl(where), key.api_key, dear, { 'user-agent': 'u'.repeat(5000) })).status);
      // Each answer's spend settles (a moment after its row shows) before the next call: the limit
      // is reached by spend, not by holds still outstanding.
      const settled = await rowsOf(key.id, codes.length);
      await settledSpend(
        key.id,
        settled.reduce((sum, row) => sum + costOf(row), 0),
      );
    }
    expect(codes).toContain(402);
    const rows = await rowsOf(key.id, codes.length);
    expect(rows).toHaveLength(codes.length);
    const cost = rows.reduce((sum, row) => sum + costOf(row), 0);
    expect(await settledSpend(key.id, cost)).toBe(cost);
    // Refused once spent, give or take the last answer (its spend settles a moment after its row shows).
    const dearest = Math.max(...rows.map(costOf));
    expect(cost).toBeGreaterThan(50_000 - 2 * dearest);
  });

  it('the internal API stores the good rows of a batch and names those it refuses', async () => {
    const key = await newKey();
    const row = (id: string, fields: Record<string, unknown> = {}) => wireRow(key.id, id, fields);
    const answer = await internal('/requests', {
      rows: [row('1', { user_agent: 'u'.repeat(4097) }), row('2'), row('3', { key_id: crypto.randomUUID() }), row('4')],
    });
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ stored: 2, refused: [{ index: 0 }, { index: 2 }] });
    const rows = await rowsOf(key.id, 2);
    expect(rows.map((stored) => stored.req_id).sort()).toEqual([`req_${'2'.repeat(32)}`, `req_${'4'.repeat(32)}`]);
    expect(await settledSpend(key.id, 2 * 3780)).toBe(2 * 3780);
  });

  it('the internal API keeps the attempts of a row, refusing alone one with 21 or with a decision it does not know', async () => {
    const key = await newKey();
    const attempt = (decision: string, status: number | null = 503) => ({
      target: 'azure/gpt-4o-mini',
      status,
      error: status === 200 ? null : 'server_error',
      ms: 40.5,
      decision,
    });
    const attempts = [attempt('retried'), attempt('served', 200)];
    const row = (id: string, fields: Record<string, unknown> = {}) =>
      wireRow(key.id, id, { served_by: 'azure/gpt-4o-mini', attempts, ...fields });
    const older = wireRow(key.id, 'c'); // a gateway from before the attempts: neither field
    const answer = await internal('/requests', {
      rows: [
        row('a'),
        row('b', { attempts: [...Array.from({ length: 20 }, () => attempt('retried')), attempt('served', 200)] }),
        row('d', { attempts: [attempt('hoped')] }),
        older,
      ],
    });
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ stored: 2, refused: [{ index: 1 }, { index: 2 }] });
    expect((answer.body.refused as { reason: string }[]).map((refused) => refused.reason)).toEqual([
      expect.stringMatching(/^\/attempts: /),
      expect.stringMatching(/^\/attempts: /),
    ]);
    const rows = await rowsOf(key.id, 2);
    const upstreamOf = (id: string) => rows.find((stored) => stored.req_id === `req_${id.repeat(32)}`)?.upstream;
    expect(upstreamOf('a')).toEqual({ model: 'gpt-4o-mini-2024-07-18', provider: 'azure', attempts });
    expect(upstreamOf('c')).toEqual({ model: 'gpt-4o-mini-2024-07-18', provider: null, attempts: null });
  });

  it('the internal API keeps the api of a row, refusing alone one it does not know; an older gateway’s is unknown', async () => {
    const key = await newKey();
    const row = (id: string, api: unknown) => wireRow(key.id, id, { api });
    // Request ids of their own: the rows above keep theirs.
    const older = wireRow(key.id, '7'); // a gateway from before the api: no such field
    const answer = await internal('/requests', {
      rows: [row('5', 'messages'), row('6', 'graphql'), row('8', null), older, row('9', 'count_tokens')],
    });
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ stored: 4, refused: [{ index: 1 }] });
    expect((answer.body.refused as { reason: string }[])[0]!.reason).toMatch(/^\/api: /);
    const rows = await rowsOf(key.id, 4);
    const apiOf = (id: string) => rows.find((stored) => stored.req_id === `req_${id.repeat(32)}`)?.api;
    expect(['5', '8', '7', '9'].map(apiOf)).toEqual(['messages', null, null, 'count_tokens']);
  });

  it.each(WHERE)('a served call records its target and its one attempt, %s', async (where) => {
    const key = await newKey();
    expect((await chat(gatewayUrl(where), key.api_key)).status).toBe(200);
    const [row] = await rowsOf(key.id, 1);
    // It came in on chat completions, and the row says so, through the internal API too.
    expect(row!.api).toBe('chat');
    expect(row!.upstream).toEqual({
      model: 'gpt-4o-mini-2024-07-18',
      provider: 'openai',
      attempts: [
        {
          target: 'openai/gpt-4o-mini-2024-07-18',
          status: 200,
          error: null,
          ms: expect.any(Number) as number,
          decision: 'served',
        },
      ],
    });
  });
});

/** A row as a gateway sends it to the internal API, of key `keyId`, its request id made of `id`. */
function wireRow(keyId: string, id: string, fields: Record<string, unknown> = {}) {
  return {
    req_id: `req_${id.repeat(32)}`,
    ts: Date.now(),
    key_id: keyId,
    model: 'openai/gpt-4o-mini',
    status: 200,
    stream: 0,
    total_ms: 12,
    ttft_ms: null,
    tpot_ms: null,
    pre_dispatch_ms: 1,
    prompt_tokens: 10,
    tokens_generated: 20,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: 0,
    total_tokens: 30,
    tokens_estimated: 0,
    cost_micro: 3780,
    is_byok: 0,
    termination_reason: 'success',
    upstream_error: null,
    upstream_model: 'gpt-4o-mini-2024-07-18',
    user_agent: 'batch-test',
    metadata: '{}',
    ...fields,
  };
}

describe('defect 2: callers with no valid key', () => {
  it.each(WHERE)('cannot make other callers fail with long models or n: 1e308, %s', async (where) => {
    const key = await newKey({ rate_limit_rpm: 10_000 });
    const nobody = 'sk_svc_nobody_0123456789';
    const attacks = Array.from({ length: 60 }, (_, index) =>
      chat(gatewayUrl(where), nobody, index % 2 ? { ...HELLO, model: 'm'.repeat(300) } : { ...HELLO, n: 1e308 }),
    );
    const legit = Array.from({ length: 60 }, () => chat(gatewayUrl(where), key.api_key));
    const [attacked, served] = await Promise.all([Promise.all(attacks), Promise.all(legit)]);
    expect(served.map((answer) => answer.status)).toEqual(Array(60).fill(200));
    expect(attacked.map((answer) => answer.status)).toEqual(Array(60).fill(401));
    const rows = await rowsOf(key.id, 60);
    expect(rows).toHaveLength(60);
    const cost = rows.reduce((sum, row) => sum + costOf(row), 0);
    expect(await settledSpend(key.id, cost)).toBe(cost);
  });

  it('the internal API decides the good requests of a batch beside one it cannot read', async () => {
    const key = await newKey();
    const ask = (id: string, fields: Record<string, unknown> = {}) => ({
      reqId: `req_${id.repeat(32)}`,
      secret: key.api_key,
      model: 'openai/gpt-4o-mini',
      boundCharacters: 10,
      maxGenerated: 10,
      timeoutMs: 1000,
      ...fields,
    });
    const answer = await internal('/admissions', {
      requests: [ask('5'), ask('6', { model: 'm'.repeat(300) }), ask('7', { maxGenerated: null }), ask('8')],
    });
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({
      decisions: [
        { kind: 'admitted' },
        { kind: 'refused', key: null, refusal: { status: 400 } },
        { kind: 'refused', key: null, refusal: { status: 400 } },
        { kind: 'admitted' },
      ],
    });
    expect(JSON.stringify(answer.body)).not.toContain(key.api_key);
  });
});

describe('defect 6: short bodies that cost many tokens', () => {
  // One call costs about 0.13 PKR here (3,000 prompt tokens of gpt-4o-mini): a limit of 1 PKR is a few calls.
  /** Waves of ten concurrent calls until a wave is refused whole; the key's rows and spend then. */
  async function spendOut(gateway: string, keyId: string, secret: string, body: Record<string, unknown>, before = 0) {
    const codes: number[] = [];
    for (let wave = 0; wave < 15 && !(codes.length > 0 && codes.slice(-10).every((code) => code === 402)); wave++) {
      codes.push(
        ...(await Promise.all(Array.from({ length: 10 }, () => chat(gateway, secret, body)))).map((a) => a.status),
      );
      // The wave's rows in the log before the next: what they cost is settled, not held.
      await rowsOf(keyId, before + codes.length);
    }
    const rows = await rowsOf(keyId, before + codes.length);
    expect(rows).toHaveLength(before + codes.length);
    const costs = rows.map(costOf);
    const spent = costs.reduce((sum, cost) => sum + cost, 0);
    expect(await settledSpend(keyId, spent)).toBe(spent);
    return { codes, spent, dearest: Math.max(...costs) };
  }

  it.each(WHERE)('images pass a credit limit by one request at most, %s', async (where) => {
    const key = await newKey();
    expect((await owner.client.patch(`/keys/${key.id}`, { rate_limit_rpm: 10_000, credit_limit_pkr: 1 })).status).toBe(
      200,
    );
    const image = {
      model: 'openai/gpt-4o-mini',
      max_tokens: 5,
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is this?' },
            { type: 'image_url', image_url: { url: 'https://example.com/a.png' } },
          ],
        },
      ],
    };
    const { codes, spent, dearest } = await spendOut(costlyUrl(where), key.id, key.api_key, image);
    expect(codes).toContain(200);
    expect(codes.at(-1)).toBe(402);
    expect(spent).toBeLessThanOrEqual(1_000_000 + dearest);
  });

  it.each(WHERE)(
    'an upstream seen to count more than the body pass a limit by one request at most, %s',
    async (where) => {
      const key = await newKey();
      expect(
        (await owner.client.patch(`/keys/${key.id}`, { rate_limit_rpm: 10_000, credit_limit_pkr: 1 })).status,
      ).toBe(200);
      const text = { ...HELLO, max_tokens: 5 };
      // One call alone first: its answer costs more than its body bounds, which the control plane sees.
      expect((await chat(costlyUrl(where), key.api_key, text)).status).toBe(200);
      await rowsOf(key.id, 1);
      const { codes, spent, dearest } = await spendOut(costlyUrl(where), key.id, key.api_key, text, 1);
      expect(codes).toContain(402);
      expect(spent).toBeLessThanOrEqual(1_000_000 + dearest);
    },
  );
});

describe('defect 9: a revoked key', () => {
  /** An answer as a caller sees it, but for `date` (the clock's second, on any two answers). */
  const seen = (answer: Answer) => {
    const { date: _date, ...headers } = answer.headers;
    return { status: answer.status, headers, text: answer.text };
  };

  it.each(WHERE)('is answered as an unknown key is, byte for byte, and keeps its rows, %s', async (where) => {
    const key = await newKey();
    expect((await chat(gatewayUrl(where), key.api_key)).status).toBe(200);
    expect((await owner.client.delete(`/keys/${key.id}`)).status).toBe(200);
    const unknown = `${key.api_key.slice(0, -4)}zzzz`;
    for (const body of [HELLO, { model: 'openai/gpt-4o-mini' }]) {
      const revoked = await chat(gatewayUrl(where), key.api_key, body);
      const stranger = await chat(gatewayUrl(where), unknown, body);
      expect(revoked.status).toBe(401);
      expect(seen(revoked)).toEqual(seen(stranger));
    }
    // The contract's filter answers 404 for a revoked key; beyond it, include_revoked lists its rows.
    expect((await owner.client.get(`/analytics/requests?time_range=1h&key_id=${key.id}`)).status).toBe(404);
    const rows = await rowsOf(key.id, 3, '&include_revoked=true');
    expect(rows.map((row) => row.status).sort()).toEqual([200, 401, 401]);
    expect(rows.filter((row) => row.status === 401).map(costOf)).toEqual([0, 0]);
  });
});

describe('defect 10: small ones', () => {
  it.each(WHERE)('JSON nested 100,000 deep is refused (400) and filed, %s', async (where) => {
    const key = await newKey();
    const deep = `{"model":"openai/gpt-4o-mini","messages":[{"role":"user","content":"Hi."}],"x":${'['.repeat(100_000)}${']'.repeat(100_000)}}`;
    const answer = await chat(gatewayUrl(where), key.api_key, deep);
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.text)).toEqual({
      error: { message: expect.stringMatching(/nests/), type: 'invalid_request_error', code: null },
    });
    // A body nested a little is served as before.
    const nested = { ...HELLO, metadata: { a: { b: { c: [[['d']]] } } } };
    expect((await chat(gatewayUrl(where), key.api_key, nested)).status).toBe(200);
    const rows = await rowsOf(key.id, 2);
    expect(rows.map((row) => row.status).sort()).toEqual([200, 400]);
    const cost = rows.reduce((sum, row) => sum + costOf(row), 0);
    expect(await settledSpend(key.id, cost)).toBe(cost);
  });

  it.each(WHERE)('a model name of 100 kB is neither echoed nor stored whole, %s', async (where) => {
    const key = await newKey();
    const answer = await chat(gatewayUrl(where), key.api_key, { ...HELLO, model: 'm'.repeat(100_000) });
    expect(answer.status).toBe(404);
    expect(JSON.parse(answer.text)).toMatchObject({ error: { code: 'model_not_found' } });
    expect(answer.text.length).toBeLessThan(300);
    const rows = await rowsOf(key.id, 1);
    expect(rows).toHaveLength(1);
    expect(rows[0]!.status).toBe(404);
    expect(rows[0]!.model.length).toBeLessThanOrEqual(256);
    expect(await settledSpend(key.id, 0)).toBe(0);
  });
});
