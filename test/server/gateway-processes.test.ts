import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import OpenAI from 'openai';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startSimulatedUpstream, type SimulatedUpstream } from '../../server/gateway/simulated-upstream.js';
import { startGateway, type TestGateway } from './gateway-harness.js';
import { spawnGateway, startGatewayProcess, type GatewayProcess } from './gateway-process-harness.js';
import { register, runOperator, startServer, type TestClient, type TestServer } from './harness.js';

/**
 * Gateways as operators run them on other machines (`npm run gateway`, processes of their own)
 * beside one control plane and the gateway in its process: every key rule holds across all of them.
 */

vi.setConfig({ testTimeout: 120_000, hookTimeout: 120_000 });

const TOKEN = 'gw-test-token-0123456789abcdef0123456789abcdef';
const FLUSH_MS = 50;

let server: TestServer;
let upstream: SimulatedUpstream;
let inProcess: TestGateway;
let gateways: GatewayProcess[] = [];
let owner: { client: TestClient; org: string };
let projectId: string;
let origin: string;

beforeAll(async () => {
  server = await startServer({ gatewayTokens: [TOKEN], gatewayFlushMs: FLUSH_MS });
  origin = new URL(server.baseUrl).origin;
  // Paced a little, so that concurrent streams overlap as they do against a provider.
  upstream = await startSimulatedUpstream({ realistic: true, ttftMs: 20, tpotMs: 1 });
  const env = { SVC_GATEWAY_TOKEN: TOKEN, SVC_UPSTREAM_URL: upstream.url };
  gateways = await Promise.all([startGatewayProcess(origin, env), startGatewayProcess(origin, env)]);
  inProcess = await startGateway(server, { byProvider: {}, fallback: { baseUrl: upstream.url, apiKey: null } });
  owner = await register(server);
  projectId = (await owner.client.get('/projects')).body.projects[0].id;
});

afterAll(async () => {
  for (const gateway of gateways) gateway.child.kill('SIGKILL');
  await inProcess?.gateway.close();
  await upstream?.close();
  await server?.close();
});

/** The gateway URLs in turn: the two processes and the one in the control plane's process. */
const everyGateway = () => [gateways[0]!.url, gateways[1]!.url, inProcess.url];

async function newKey(fields: Record<string, unknown> = {}): Promise<{ id: string; api_key: string }> {
  const answer = await owner.client.post('/keys', { project_id: projectId, name: `k${Math.random()}`, ...fields });
  expect(answer.status).toBe(201);
  return answer.body;
}

/** A chat completion's status through `gateway` (200, or the refusal's). */
async function status(gateway: string, apiKey: string, fields: Record<string, unknown> = {}): Promise<number> {
  const answer = await request(`${gateway}/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'Hi.' }], ...fields }),
  });
  await answer.body.text();
  return answer.statusCode;
}

async function keyFigures(keyId: string): Promise<{ spent: number; throttled: number }> {
  const throttling = await owner.client.get('/admin/usage-throttling?time_range=1h');
  const key = throttling.body.keys.find((k: { id: string }) => k.id === keyId);
  return { spent: key.spent_cents, throttled: key.throttled_requests };
}

/**
 * The key's settled spend once it is `expected`, or as it stands after the wait: rows are
 * committed first and their spend settled into the key right after (spend-outbox.ts), so a
 * reader between the two sees the rows without their spend for a moment.
 */
async function settledSpend(keyId: string, expected: number): Promise<number> {
  let spent = (await keyFigures(keyId)).spent;
  for (let attempt = 0; spent !== expected && attempt < 100; attempt++) {
    await new Promise((done) => setTimeout(done, FLUSH_MS));
    spent = (await keyFigures(keyId)).spent;
  }
  return spent;
}

/** The key's rows once `count` are in the request log. */
async function rowsOf(keyId: string, count: number): Promise<{ status: number; financials: { cost_pkr: number } }[]> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const page = await owner.client.get(`/analytics/requests?time_range=1h&limit=1000&key_id=${keyId}`);
    if (page.status === 200 && page.body.requests.length >= count) return page.body.requests;
    await new Promise((done) => setTimeout(done, FLUSH_MS));
  }
  throw new Error(`fewer than ${count} rows for ${keyId}`);
}

async function waitForRows(client: TestClient, keyId: string): Promise<{ financials: { is_byok: number } }[]> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const page = await client.get(`/analytics/requests?time_range=1h&key_id=${keyId}`);
    if (page.status === 200 && page.body.requests.length > 0) return page.body.requests;
    await new Promise((done) => setTimeout(done, FLUSH_MS));
  }
  throw new Error(`no rows for ${keyId}`);
}

const internal = (path: string, body?: unknown, token = TOKEN) =>
  request(`${origin}/internal/gateway${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });

describe('gateways in processes of their own', () => {
  it('serve a key made in the API, through the official openai package, and its row reaches the request log', async () => {
    const key = await newKey();
    const openai = new OpenAI({ apiKey: key.api_key, baseURL: gateways[0]!.url, maxRetries: 0 });
    const answer = await openai.chat.completions.create({
      model: 'openai/gpt-4o-mini',
      messages: [{ role: 'user', content: 'Hello from another process.' }],
    });
    expect(answer.choices[0]?.message.content?.length).toBeGreaterThan(0);
    const stream = await openai.chat.completions.create({
      model: 'openai/gpt-4o-mini',
      messages: [{ role: 'user', content: 'Stream it.' }],
      stream: true,
    });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    expect(text.length).toBeGreaterThan(0);
    const models = await openai.models.list();
    expect(models.data.map((model) => model.id)).toContain('openai/gpt-4o-mini');
    const rows = await rowsOf(key.id, 2);
    expect(rows.map((row) => row.status)).toEqual([200, 200]);
    // Spend settled from the rows the gateway sent, exactly.
    const cost = rows.reduce((sum, row) => sum + Math.round(row.financials.cost_pkr * 1e6), 0);
    expect(cost).toBeGreaterThan(0);
    expect(await settledSpend(key.id, cost)).toBe(cost);
  });

  it('refuse a revoked key once DELETE has answered: not one request served in a thousand trials', async () => {
    let served = 0;
    const trial = async (index: number) => {
      const key = await newKey();
      const first = everyGateway()[index % 3]!;
      const models = await request(`${first}/models`, { headers: { authorization: `Bearer ${key.api_key}` } });
      await models.body.text();
      expect(models.statusCode).toBe(200);
      expect((await owner.client.delete(`/keys/${key.id}`)).status).toBe(200);
      const after = await Promise.all(everyGateway().map((gateway) => status(gateway, key.api_key)));
      served += after.filter((code) => code !== 401).length;
    };
    // Eight trials at a time: the revocations race other keys' traffic, as they would.
    const trials = Array.from({ length: 1000 }, (_, index) => index);
    for (let at = 0; at < trials.length; at += 8) await Promise.all(trials.slice(at, at + 8).map(trial));
    expect(served).toBe(0);
  });

  it('hold a key to its rate_limit_rpm across every gateway; refusals are 429 rows that usage-throttling counts', async () => {
    const key = await newKey();
    expect((await owner.client.patch(`/keys/${key.id}`, { rate_limit_rpm: 5 })).status).toBe(200);
    const codes: number[] = [];
    for (let index = 0; index < 12; index++) codes.push(await status(everyGateway()[index % 3]!, key.api_key));
    expect(codes.filter((code) => code === 200)).toHaveLength(5);
    expect(codes.filter((code) => code === 429)).toHaveLength(7);
    const rows = await rowsOf(key.id, 12);
    expect(rows.filter((row) => row.status === 429)).toHaveLength(7);
    expect((await keyFigures(key.id)).throttled).toBe(7);
  });

  it('apply a PATCH of the limits from the next request, on another process', async () => {
    const key = await newKey();
    expect(await status(gateways[1]!.url, key.api_key)).toBe(200);
    expect((await owner.client.patch(`/keys/${key.id}`, { rate_limit_rpm: 1 })).status).toBe(200);
    expect(await status(gateways[0]!.url, key.api_key)).toBe(429);
    expect((await owner.client.patch(`/keys/${key.id}`, { rate_limit_rpm: 60 })).status).toBe(200);
    expect(await status(inProcess.url, key.api_key)).toBe(200);
  });

  it("forward on the organisation's own vault key, opened by the control plane and never logged", async () => {
    const other = await register(server);
    const vaultKey = 'sk-byok-across-processes-0123';
    expect((await other.client.post('/vault/keys', { provider: 'openai', api_key: vaultKey })).status).toBe(200);
    const otherProject = (await other.client.get('/projects')).body.projects[0].id;
    const key = (await other.client.post('/keys', { project_id: otherProject, name: 'byok' })).body;
    expect(await status(gateways[0]!.url, key.api_key)).toBe(200);
    expect(upstream.lastAuthorization()).toBe(`Bearer ${vaultKey}`);
    const rows = await waitForRows(other.client, key.id);
    expect(rows[0]!.financials.is_byok).toBe(1);
    for (const gateway of gateways) expect(gateway.output()).not.toContain(vaultKey);
    expect(server.logs()).not.toContain(vaultKey);
  });

  it('keep spend within one request of the credit limit under 50 concurrent streams over three gateways', async () => {
    const limit = 1_000_000; // micro-PKR: one rupee
    await runOperator(server, 'deposit', '--org', owner.org, '--pkr', '1');
    const key = await newKey();
    // The rate as high as it goes (a PATCH replaces all three limits): only the credit may refuse.
    const patched = await owner.client.patch(`/keys/${key.id}`, { rate_limit_rpm: 10_000, credit_limit_pkr: 1 });
    expect(patched.status).toBe(200);
    const fields = { model: 'openai/gpt-4o', stream: true, max_tokens: 60 };
    const codes: number[] = [];
    // Waves of 50 until the limit refuses everything: each wave's streams overlap.
    const spentOut = () => codes.length > 0 && codes.slice(-50).every((code) => code === 402);
    for (let wave = 0; wave < 20 && !spentOut(); wave++) {
      const waveCodes = await Promise.all(
        Array.from({ length: 50 }, (_, index) => status(everyGateway()[index % 3]!, key.api_key, fields)),
      );
      codes.push(...waveCodes);
    }
    expect(codes).toContain(200);
    expect(spentOut()).toBe(true);
    const rows = await rowsOf(key.id, codes.length);
    const costs = rows.map((row) => Math.round(row.financials.cost_pkr * 1e6));
    const spent = costs.reduce((sum, cost) => sum + cost, 0);
    expect(await settledSpend(key.id, spent)).toBe(spent);
    expect(spent).toBeLessThanOrEqual(limit + Math.max(...costs));
  });

  it('store a batch sent again (an answer lost on the way) once, spend included', async () => {
    const key = await newKey();
    const row = {
      req_id: `req_${'a'.repeat(24)}${Date.now().toString(16).padStart(8, '0').slice(-8)}`,
      ts: Date.now(),
      key_id: key.id,
      model: 'openai/gpt-4o-mini',
      status: 200,
      stream: 0,
      total_ms: 120,
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
      user_agent: 'resend-test',
      metadata: '{}',
    };
    for (let send = 0; send < 3; send++) {
      const answer = await internal('/requests', {
        rows: [row, { ...row, req_id: row.req_id.replace(/^req_a/, 'req_b') }],
      });
      expect(answer.statusCode).toBe(200);
      expect(await answer.body.json()).toEqual({ stored: 2 });
    }
    const rows = await rowsOf(key.id, 2);
    expect(rows).toHaveLength(2);
    expect(await settledSpend(key.id, 2 * 3780)).toBe(2 * 3780);
  });

  it('refuse the internal API to a caller without a service token, and rows for a key it does not know', async () => {
    expect((await internal('/status', undefined, 'not-the-token-0123456789abcdef0123456789')).statusCode).toBe(401);
    const bare = await request(`${origin}/internal/gateway/status`);
    expect(bare.statusCode).toBe(401);
    await bare.body.text();
    const unknown = await internal('/admissions', {
      requests: [
        {
          reqId: `req_${'c'.repeat(32)}`,
          secret: 'sk_svc_nobody',
          model: 'openai/gpt-4o-mini',
          boundCharacters: 10,
          maxGenerated: 10,
          timeoutMs: 1000,
        },
      ],
    });
    expect(await unknown.body.json()).toMatchObject({
      decisions: [{ kind: 'refused', key: null, refusal: { status: 401 } }],
    });
  });
});

describe('a gateway process', () => {
  it('will not start on a token the control plane refuses, nor beside a control plane that takes no gateways', async () => {
    const wrong = spawnGateway(origin, { SVC_GATEWAY_TOKEN: 'x'.repeat(40), SVC_UPSTREAM_URL: upstream.url });
    expect(await wrong.exited).not.toBe(0);
    expect(wrong.output()).toMatch(/refused SVC_GATEWAY_TOKEN/);
    expect(wrong.output()).not.toContain('x'.repeat(40));
    const closed = await startServer();
    try {
      const none = spawnGateway(new URL(closed.baseUrl).origin, {
        SVC_GATEWAY_TOKEN: TOKEN,
        SVC_UPSTREAM_URL: upstream.url,
      });
      expect(await none.exited).not.toBe(0);
      expect(none.output()).toMatch(/takes no gateways: set SVC_GATEWAY_TOKENS/);
    } finally {
      await closed.close();
    }
  });

  it('killed mid-request leaves rows and spend agreeing, and what it held lapses after its timeout', async () => {
    const silent = createServer(() => {
      // Never answers: the request is under way when the gateway dies.
    });
    await new Promise<void>((done) => silent.listen(0, '127.0.0.1', done));
    const silentUrl = `http://127.0.0.1:${(silent.address() as AddressInfo).port}/v1`;
    const doomed = await startGatewayProcess(origin, { SVC_GATEWAY_TOKEN: TOKEN, SVC_UPSTREAM_URL: silentUrl });
    try {
      // One gpt-4o request of up to 200 tokens holds more than the whole limit.
      const key = await newKey({ credit_limit_cents: 300_000 });
      const dear = { model: 'openai/gpt-4o', max_tokens: 200 };
      const reached = new Promise((done) => silent.once('request', done));
      const pending = status(doomed.url, key.api_key, dear).catch(() => 0);
      await reached;
      doomed.child.kill('SIGKILL');
      await pending;
      expect(await status(gateways[0]!.url, key.api_key, dear)).toBe(402);
      server.advance(120_000 + 60_000 + 1_000);
      expect(await status(gateways[0]!.url, key.api_key, dear)).toBe(200);
      const rows = await rowsOf(key.id, 2);
      expect(rows.map((row) => row.status).sort()).toEqual([200, 402]);
      const cost = rows.reduce((sum, row) => sum + Math.round(row.financials.cost_pkr * 1e6), 0);
      expect(await settledSpend(key.id, cost)).toBe(cost);
    } finally {
      doomed.child.kill('SIGKILL');
      silent.closeAllConnections();
      silent.close();
    }
  });

  it('sends its last rows when stopped, and refuses (503) while its control plane cannot be reached', async () => {
    const key = await newKey();
    const gateway = gateways[1]!;
    expect(await status(gateway.url, key.api_key)).toBe(200);
    gateway.child.kill('SIGTERM');
    expect(await gateway.exited).toBe(0);
    expect((await rowsOf(key.id, 1)).map((row) => row.status)).toEqual([200]);

    await server.app.close();
    const answer = await request(`${gateways[0]!.url}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key.api_key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'Hi.' }] }),
    });
    expect(answer.statusCode).toBe(503);
    expect(answer.headers['retry-after']).toBe('1');
    expect(await answer.body.json()).toMatchObject({ error: { code: 'control_plane_unavailable' } });
  });
});
