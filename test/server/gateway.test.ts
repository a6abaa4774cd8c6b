import Database from 'better-sqlite3';
import OpenAI from 'openai';
import pg from 'pg';
import type { FastifyInstance } from 'fastify';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulatedUpstream, type SimulatedUpstream } from '../../server/gateway/simulated-upstream.js';
import { admitDirectly, spentCents, startGateway } from './gateway-harness.js';
import { controlSql, register, runOperator, startServer, type TestClient, type TestServer } from './harness.js';
import type { Attempt } from '../../server/schemas/request-log.js';
import { requestRecord } from './request-rows.js';

let server: TestServer;
let upstream: SimulatedUpstream;
/** Upstreams of other providers' routes here, each misbehaving one way (see `misbehaving`). */
let misbehaving: Server;
let gateway: FastifyInstance;
let gatewayUrl: string;
let owner: { client: TestClient; email: string; org: string };
let projectId: string;

const FLUSH_MS = 50;

/** Another writer holding the server's request log, as an import does, until `end`. */
async function holdRequestLog(server: TestServer): Promise<{ end(how: 'COMMIT' | 'ROLLBACK'): Promise<void> }> {
  const { telemetryUrl } = server.config;
  if (telemetryUrl !== undefined) {
    const client = new pg.Client({ connectionString: telemetryUrl });
    await client.connect();
    await client.query('BEGIN');
    await client.query('LOCK TABLE requests IN SHARE ROW EXCLUSIVE MODE');
    return {
      async end(how) {
        await client.query(how);
        await client.end();
      },
    };
  }
  const importer = new Database(server.config.telemetryDbPath);
  importer.exec('BEGIN IMMEDIATE');
  return {
    async end(how) {
      importer.exec(how);
      importer.close();
    },
  };
}

beforeAll(async () => {
  server = await startServer({ gatewayFlushMs: FLUSH_MS });
  misbehaving = createServer((request, response) => {
    const path = request.url ?? '';
    if (path.startsWith('/fails/')) {
      response.writeHead(500, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ error: { message: 'Internal server error', type: 'api_error', code: null } }));
    } else if (path.startsWith('/drops/')) {
      // Two deltas of a stream, then the connection is gone without [DONE].
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      const delta = (content: string) =>
        `data: ${JSON.stringify({ object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content } }] })}\n\n`;
      response.write(delta('Half an '));
      response.write(delta('answer'), () => setTimeout(() => response.destroy(), 20));
    } else if (path.startsWith('/denies/')) {
      response.writeHead(401, { 'content-type': 'application/json' });
      const message = 'Incorrect API key provided: sk-pl****abcd';
      response.end(JSON.stringify({ error: { message, type: 'invalid_request_error', code: 'invalid_api_key' } }));
    } else if (path.startsWith('/tail/')) {
      // A stream whose last event has no blank line after it.
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      const chunk = { object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content: 'Done.' } }] };
      response.end(`data: ${JSON.stringify(chunk)}\n\ndata: [DONE]\n`);
    }
    // '/silent/': never answers.
  });
  await new Promise<void>((resolve) => misbehaving.listen(0, '127.0.0.1', resolve));
  const at = (path: string) => ({
    baseUrl: `http://127.0.0.1:${(misbehaving.address() as AddressInfo).port}/${path}/v1`,
    apiKey: null,
  });
  // Any key is accepted: the test reads which one came.
  upstream = await startSimulatedUpstream({ realistic: true, ttftMs: 30, tpotMs: 2 });
  ({ gateway, url: gatewayUrl } = await startGateway(
    server,
    {
      byProvider: {
        ANTHROPIC: at('fails'),
        GOOGLE: at('drops'),
        MISTRAL: at('silent'),
        DEEPSEEK: at('denies'),
        META: at('tail'),
      },
      fallback: { baseUrl: upstream.url, apiKey: 'sk-platform-upstream' },
    },
    { timeoutMs: 1500 },
  ));
  owner = await register(server);
  projectId = (await owner.client.get('/projects')).body.projects[0].id;
});
afterAll(async () => {
  await gateway.close();
  await upstream.close();
  misbehaving.closeAllConnections();
  await new Promise((resolve) => misbehaving.close(resolve));
  await server.close();
});

async function newKey(fields: Record<string, unknown> = {}): Promise<{ id: string; api_key: string }> {
  const answer = await owner.client.post('/keys', { project_id: projectId, name: `k${Math.random()}`, ...fields });
  expect(answer.status, JSON.stringify(answer.body)).toBe(201);
  return answer.body;
}

const sdk = (apiKey: string, headers: Record<string, string> = {}) =>
  new OpenAI({ apiKey, baseURL: gatewayUrl, maxRetries: 0, defaultHeaders: headers });

const ask = (client: OpenAI, model = 'openai/gpt-4o-mini') =>
  client.chat.completions.create({ model, messages: [{ role: 'user', content: 'Say something about gateways.' }] });

interface Row {
  req_id: string;
  model: string;
  status: number;
  stream: boolean;
  key: { id: string } | null;
  metrics: Record<string, number | boolean | null>;
  financials: { cost_pkr: number; is_byok: number };
  status_detail: { termination_reason: string; upstream_error: string | null };
  upstream: { model: string; provider: string | null; attempts: Attempt[] | null } | null;
  user_agent: string;
  metadata: Record<string, string>;
}

/**
 * The key's rows, newest first, once `count` of them are in the request log (written every
 * FLUSH_MS). Read from the organisation's log: a revoked key's id is no longer a filter.
 */
async function rowsOf(keyId: string, count: number, reader: TestClient = owner.client): Promise<Row[]> {
  for (let attempt = 0; attempt < 100; attempt++) {
    const page = await reader.get('/analytics/requests?time_range=1h&limit=200');
    expect(page.status).toBe(200);
    const rows = (page.body.requests as Row[]).filter((row) => row.key?.id === keyId);
    if (rows.length >= count) return rows;
    await new Promise((resolve) => setTimeout(resolve, FLUSH_MS));
  }
  throw new Error(`fewer than ${count} rows for key ${keyId}`);
}

describe('the gateway, called with the official openai package', () => {
  it('answers a chat completion and writes its row, tokens from the upstream usage, cost settled into the key', async () => {
    const key = await newKey();
    const answer = await ask(sdk(key.api_key, { 'X-SVC-Meta-Team': 'Payments', 'User-Agent': 'billing-bot/2.1' }));
    expect(answer.choices[0]?.message.content?.length).toBeGreaterThan(0);
    expect(upstream.lastAuthorization()).toBe('Bearer sk-platform-upstream');

    const [row] = await rowsOf(key.id, 1);
    expect(row).toMatchObject({
      model: 'openai/gpt-4o-mini',
      status: 200,
      stream: false,
      key: { id: key.id },
      status_detail: { termination_reason: 'success', upstream_error: null },
      upstream: { model: 'gpt-4o-mini-2024-07-18', provider: 'openai' },
      user_agent: 'billing-bot/2.1',
      metadata: { team: 'Payments' },
    });
    // One attempt, the target that served, timed from dispatch to the end of its answer.
    expect(row!.upstream!.attempts).toEqual([
      { target: 'openai/gpt-4o-mini-2024-07-18', status: 200, error: null, ms: expect.any(Number), decision: 'served' },
    ]);
    const [attempt] = row!.upstream!.attempts!;
    expect(attempt!.ms).toBeGreaterThan(0);
    expect(attempt!.ms).toBeLessThanOrEqual(
      (row!.metrics.total_ms as number) - (row!.metrics.pre_dispatch_ms as number),
    );
    const usage = answer.usage!;
    const cached = usage.prompt_tokens_details?.cached_tokens ?? 0;
    expect(row!.metrics.prompt_tokens).toBe(usage.prompt_tokens - cached);
    expect(row!.metrics.tokens_generated).toBe(usage.completion_tokens);
    expect(row!.metrics.cache_read_input_tokens).toBe(cached);
    expect(row!.metrics.tokens_estimated).toBe(false);
    expect(row!.metrics.ttft_ms).toBeNull();
    // openai/gpt-4o-mini: 42 micro-PKR a prompt token, 168 a generated one, 21 a cached one.
    const micro = (usage.prompt_tokens - cached) * 42 + usage.completion_tokens * 168 + cached * 21;
    expect(row!.financials).toEqual({ cost_pkr: micro / 1e6, is_byok: 0 });
    // Spend settles just after the rows commit (the outbox, in another store): read until it lands.
    await expect.poll(() => spentCents(owner.client, key.id)).toBe(micro);
  });

  it('streams, and measures time to first token and time per token', async () => {
    const key = await newKey();
    const stream = await sdk(key.api_key).chat.completions.create({
      model: 'openai/gpt-4o-mini',
      messages: [{ role: 'user', content: 'Stream a few words.' }],
      stream: true,
    });
    let text = '';
    let chunks = 0;
    for await (const chunk of stream) {
      chunks++;
      text += chunk.choices[0]?.delta.content ?? '';
      // No usage-only chunk: this caller did not ask for one.
      expect(chunk.choices.length).toBeGreaterThan(0);
    }
    expect(chunks).toBeGreaterThan(2);
    expect(text.length).toBeGreaterThan(0);
    const [row] = await rowsOf(key.id, 1);
    expect(row).toMatchObject({ status: 200, stream: true, status_detail: { termination_reason: 'success' } });
    expect(row!.metrics.ttft_ms).toBeGreaterThanOrEqual(30);
    expect(row!.metrics.tpot_ms).toBeGreaterThan(0);
    expect(row!.metrics.tokens_estimated).toBe(false);
    // Timed to the microsecond, which the store keeps in a few bytes (018_compact_timings.sql).
    const { total_ms, ttft_ms, tpot_ms, pre_dispatch_ms } = row!.metrics as Record<string, number>;
    for (const ms of [total_ms, ttft_ms, tpot_ms, pre_dispatch_ms]) expect(Math.round(ms! * 1000) / 1000).toBe(ms);
    expect([total_ms, ttft_ms, tpot_ms].some((ms) => !Number.isInteger(ms! * 10))).toBe(true);
  });

  it('hands on the usage chunk to a caller who asks for it', async () => {
    const key = await newKey();
    const stream = await sdk(key.api_key).chat.completions.create({
      model: 'openai/gpt-4o-mini',
      messages: [{ role: 'user', content: 'Count to three.' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let usage: OpenAI.CompletionUsage | null | undefined = null;
    for await (const chunk of stream) usage = chunk.usage ?? usage;
    expect(usage?.completion_tokens).toBeGreaterThan(0);
    const [row] = await rowsOf(key.id, 1);
    expect(row!.metrics.tokens_generated).toBe(usage!.completion_tokens);
  });

  it('refuses a revoked key from the very next request, with a row for the refusal', async () => {
    const key = await newKey();
    await ask(sdk(key.api_key));
    expect((await owner.client.delete(`/keys/${key.id}`)).status).toBe(200);
    await expect(ask(sdk(key.api_key))).rejects.toBeInstanceOf(OpenAI.AuthenticationError);
    const rows = await rowsOf(key.id, 2);
    expect(rows.map((row) => row.status)).toEqual([401, 200]);
    expect(rows[0]!.metrics.tokens_generated).toBe(0);
    expect(rows[0]!.financials.cost_pkr).toBe(0);
  });

  it('answers an unknown key and an expired one alike, saying nothing of which', async () => {
    const unknown = await ask(sdk('sk_svc_' + 'x'.repeat(32))).catch((error: unknown) => error);
    expect(unknown).toBeInstanceOf(OpenAI.AuthenticationError);
    const key = await newKey({ expires_at: new Date(Date.now() + 60_000).toISOString() });
    server.advance(61_000);
    try {
      const expired = await ask(sdk(key.api_key)).catch((error: unknown) => error);
      expect(expired).toBeInstanceOf(OpenAI.AuthenticationError);
      expect((expired as InstanceType<typeof OpenAI.APIError>).message).toBe(
        (unknown as InstanceType<typeof OpenAI.APIError>).message,
      );
    } finally {
      server.advance(-61_000);
    }
  });

  it('refuses a model outside the key scope with 403, and an unknown model with 404', async () => {
    const key = await newKey({ allowed_models: ['openai/gpt-4o-mini'] });
    await expect(ask(sdk(key.api_key), 'openai/gpt-4o')).rejects.toBeInstanceOf(OpenAI.PermissionDeniedError);
    const open = await newKey();
    await expect(ask(sdk(open.api_key), 'nobody/no-model')).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    const models = await sdk(key.api_key).models.list();
    expect(models.data.map((model) => model.id)).toEqual(['openai/gpt-4o-mini']);
  });

  it('holds a key to its rate_limit_rpm with Retry-After, and a PATCH applies from the next request', async () => {
    const key = await newKey();
    expect((await owner.client.patch(`/keys/${key.id}`, { rate_limit_rpm: 2 })).status).toBe(200);
    const client = sdk(key.api_key);
    const first = await client.chat.completions
      .create({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'one' }] })
      .withResponse();
    expect(first.response.headers.get('x-ratelimit-limit-requests')).toBe('2');
    expect(first.response.headers.get('x-ratelimit-remaining-requests')).toBe('1');
    await ask(client);
    const refused = (await ask(client).catch((error: unknown) => error)) as InstanceType<typeof OpenAI.APIError>;
    expect(refused).toBeInstanceOf(OpenAI.RateLimitError);
    expect(Number(refused.headers?.get('retry-after'))).toBeGreaterThan(0);
    expect((await owner.client.patch(`/keys/${key.id}`, { rate_limit_rpm: 3 })).status).toBe(200);
    await ask(client);
    await rowsOf(key.id, 4);
    const throttling = await owner.client.get('/admin/usage-throttling?time_range=1h');
    expect(throttling.body.keys.find((k: { id: string }) => k.id === key.id).throttled_requests).toBe(1);
  });

  it('refuses with 402 once the credit limit is spent', async () => {
    const key = await newKey({ credit_limit_cents: 1 });
    await ask(sdk(key.api_key));
    await rowsOf(key.id, 1);
    const refused = await ask(sdk(key.api_key)).catch((error: unknown) => error);
    expect((refused as InstanceType<typeof OpenAI.APIError>).status).toBe(402);
    const rows = await rowsOf(key.id, 2);
    expect(rows[0]!.status).toBe(402);
  });

  it("passes an upstream's error on with its status, and records it", async () => {
    const key = await newKey();
    const failed = await ask(sdk(key.api_key), 'anthropic/claude-3-5-haiku').catch((error: unknown) => error);
    expect(failed).toBeInstanceOf(OpenAI.InternalServerError);
    const [row] = await rowsOf(key.id, 1);
    expect(row!.status).toBe(500);
    expect(row!.status_detail.upstream_error).toBe('500 api_error: Internal server error');
    expect(row!.financials.cost_pkr).toBe(0);
    // No target's answer served the caller.
    expect(row!.upstream).toMatchObject({ model: 'claude-3-5-haiku-20241022', provider: null });
  });

  it('cuts an upstream that has not answered in time: 504, proxy_guillotine', async () => {
    const key = await newKey();
    const failed = await ask(sdk(key.api_key), 'mistral/mistral-large').catch((error: unknown) => error);
    expect((failed as InstanceType<typeof OpenAI.APIError>).status).toBe(504);
    const [row] = await rowsOf(key.id, 1);
    expect(row).toMatchObject({ status: 504, status_detail: { termination_reason: 'proxy_guillotine' } });
    // Its wait of 1.5 s is recorded. Node's timers keep whole milliseconds: one may fire up to a
    // millisecond before performance.now() has 1,500 ms gone (measured once: 1,499.75).
    expect(row!.metrics.total_ms).toBeGreaterThanOrEqual(1499);
    expect(row!.metrics.total_ms).toBeLessThan(3000);
  });

  it('records a stream the upstream drops as upstream_stream_aborted, billed for what it generated', async () => {
    const key = await newKey();
    const stream = await sdk(key.api_key).chat.completions.create({
      model: 'google/gemini-2.5-flash',
      messages: [{ role: 'user', content: 'Go on.' }],
      stream: true,
    });
    let text = '';
    const read = (async () => {
      for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    })();
    await expect(read).rejects.toThrow();
    expect(text).toBe('Half an answer');
    const [row] = await rowsOf(key.id, 1);
    expect(row).toMatchObject({
      status: 200,
      stream: true,
      status_detail: { termination_reason: 'upstream_stream_aborted' },
    });
    // No usage came: the tokens are estimated from the 14 characters that did.
    expect(row!.metrics).toMatchObject({ tokens_generated: 4, tokens_estimated: true });
    expect(row!.financials.cost_pkr).toBeGreaterThan(0);
  });

  it('records a caller who hangs up mid-stream as client_disconnect', async () => {
    const key = await newKey();
    const abort = new AbortController();
    const stream = await sdk(key.api_key).chat.completions.create(
      { model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'A long answer, please.' }], stream: true },
      { signal: abort.signal },
    );
    let chunks = 0;
    // The SDK ends the iteration quietly on its own abort.
    for await (const chunk of stream) {
      chunks++;
      if (chunk.choices[0]?.delta.content) abort.abort();
    }
    expect(chunks).toBeLessThan(4);
    const [row] = await rowsOf(key.id, 1);
    expect(row).toMatchObject({ status: 200, status_detail: { termination_reason: 'client_disconnect' } });
  });

  it("serves on the organisation's own vault key for the provider, settling only the service's share", async () => {
    const other = await register(server);
    expect(
      (await other.client.post('/vault/keys', { provider: 'openai', api_key: 'sk-byok-of-their-own-0123' })).status,
    ).toBe(200);
    const otherProject = (await other.client.get('/projects')).body.projects[0].id;
    const key = (await other.client.post('/keys', { project_id: otherProject, name: 'byok' })).body;
    const answer = await ask(sdk(key.api_key));
    expect(upstream.lastAuthorization()).toBe('Bearer sk-byok-of-their-own-0123');
    const [row] = await rowsOf(key.id, 1, other.client);
    const usage = answer.usage!;
    const cached = usage.prompt_tokens_details?.cached_tokens ?? 0;
    const full = (usage.prompt_tokens - cached) * 42 + usage.completion_tokens * 168 + cached * 21;
    expect(row!.financials).toEqual({ cost_pkr: Math.round(full * 0.02) / 1e6, is_byok: 1 });
    // The service's own routes are the service's to pay, on the same upstream models.
    await ask(sdk(key.api_key), 'svc/fast');
    expect(upstream.lastAuthorization()).toBe('Bearer sk-platform-upstream');
    const [serviceRow] = (await rowsOf(key.id, 2, other.client)).filter((each) => each.model === 'svc/fast');
    expect(serviceRow!.financials.is_byok).toBe(0);
    // Rotated, the new key serves from the next request; removed, the platform's own does.
    expect(
      (await other.client.post('/vault/keys', { provider: 'openai', api_key: 'sk-byok-rotated-4567' })).status,
    ).toBe(200);
    await ask(sdk(key.api_key));
    expect(upstream.lastAuthorization()).toBe('Bearer sk-byok-rotated-4567');
    expect((await other.client.delete('/vault/keys/openai')).status).toBe(200);
    await ask(sdk(key.api_key));
    expect(upstream.lastAuthorization()).toBe('Bearer sk-platform-upstream');
    expect(server.logs()).not.toContain('sk-byok-of-their-own-0123');
    expect(server.logs()).not.toContain('sk-byok-rotated-4567');
  });

  it("answers 502 when the upstream refuses the platform's own credentials, without the upstream's words", async () => {
    const key = await newKey();
    const failed = (await ask(sdk(key.api_key), 'deepseek/deepseek-chat').catch(
      (error: unknown) => error,
    )) as InstanceType<typeof OpenAI.APIError>;
    expect(failed.status).toBe(502);
    expect(JSON.stringify(failed.error)).not.toContain('sk-pl');
    const [row] = await rowsOf(key.id, 1);
    expect(row!.status).toBe(502);
    expect(row!.status_detail.upstream_error).not.toContain('sk-pl');
  });

  it('reads the last event of a stream that ends without a blank line', async () => {
    const key = await newKey();
    const stream = await sdk(key.api_key).chat.completions.create({
      model: 'meta/llama-3.3-70b-instruct',
      messages: [{ role: 'user', content: 'Finish.' }],
      stream: true,
    });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    expect(text).toBe('Done.');
    const [row] = await rowsOf(key.id, 1);
    expect(row!.status_detail.termination_reason).toBe('success');
  });

  it('writes a row for a known key whose request could not be read (not JSON, another content type)', async () => {
    const key = await newKey();
    const post = (contentType: string, body: string) =>
      fetch(`${gatewayUrl}/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key.api_key}`, 'content-type': contentType },
        body,
      });
    const broken = await post('application/json', '{"model": "openai/gpt-4o-mini", "messages": [');
    expect(broken.status).toBe(400);
    expect(((await broken.json()) as { error: { type: string } }).error.type).toBe('invalid_request_error');
    const requestId = broken.headers.get('x-request-id');
    const plain = await post('application/xml', '<chat/>');
    expect(plain.status).toBe(415);
    const rows = await rowsOf(key.id, 2);
    expect(rows.map((row) => row.status).sort()).toEqual([400, 415]);
    expect(rows.map((row) => row.req_id)).toContain(requestId);
    expect(rows.every((row) => row.financials.cost_pkr === 0)).toBe(true);
  });

  it('keeps rows while another writer holds the store (an import), and writes each once when it lets go', async () => {
    const key = await newKey();
    const importer = await holdRequestLog(server);
    let released = false;
    try {
      const answers = await Promise.all([ask(sdk(key.api_key)), ask(sdk(key.api_key))]);
      expect(answers.every((answer) => answer.choices.length > 0)).toBe(true);
      // Several flushes fail on the lock meanwhile (SQLite) or wait for it (PostgreSQL); none
      // of them may leave a row behind.
      await new Promise((resolve) => setTimeout(resolve, 1500 + 4 * FLUSH_MS));
      const waiting = await owner.client.get(`/analytics/requests?time_range=1h&key_id=${key.id}`);
      expect(waiting.body.requests).toHaveLength(0);
      await importer.end('COMMIT');
      released = true;
    } finally {
      if (!released) await importer.end('ROLLBACK');
    }
    const rows = await rowsOf(key.id, 2);
    expect(rows).toHaveLength(2);
    const spent = rows.reduce((sum, row) => sum + Math.round(row.financials.cost_pkr * 1e6), 0);
    await expect.poll(() => spentCents(owner.client, key.id)).toBe(spent);
  });

  it('sees what another process changes in the store from the next request: a route turned off, a key revoked', async () => {
    const key = await newKey();
    const client = sdk(key.api_key);
    await ask(client, 'openai/gpt-4o');
    await runOperator(server, 'set-model', '--id', 'openai/gpt-4o', '--active', 'false');
    try {
      await expect(ask(client, 'openai/gpt-4o')).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    } finally {
      await runOperator(server, 'set-model', '--id', 'openai/gpt-4o', '--active', 'true');
    }
    await ask(client, 'openai/gpt-4o');
    // A file edited beside the server (or a tool of the operator's): no call of this process moved.
    await controlSql(server, `UPDATE api_keys SET revoked_at = ${Date.now()} WHERE id = '${key.id}'`);
    await expect(ask(client)).rejects.toBeInstanceOf(OpenAI.AuthenticationError);
  });

  it('reads the key again when a row was written while its reads were awaited (a store over the network)', async () => {
    const key = await newKey({ credit_limit_cents: 1 });
    const { admissions, control } = server.app;
    const admit = (reqId: string) => admitDirectly(server, key.api_key, reqId);
    const first = await admit('req_net_first');
    if (first.kind !== 'admitted') throw new Error('the first request was refused');
    // The routes document answers late, as a database across the network may: the row is written meanwhile.
    const routes = control.routes;
    const current = routes.current.bind(routes);
    let entered!: () => void;
    let open!: () => void;
    const reading = new Promise<void>((resolve) => (entered = resolve));
    const gate = new Promise<void>((resolve) => (open = resolve));
    routes.current = async () => {
      entered();
      await gate;
      return current();
    };
    try {
      const second = admit('req_net_second');
      await reading;
      // The key was read before its spend: the first row's cost (the whole limit) moves from the
      // holds into the key while the second request waits for the routes document.
      admissions.record([
        {
          ...requestRecord(0),
          req_id: 'req_net_first',
          ts: Date.now(),
          org_id: first.key.org_id,
          project_id: first.key.project_id,
          key_id: key.id,
          cost_micro: 10_000,
        },
      ]);
      await admissions.written();
      open();
      expect(await second).toMatchObject({ kind: 'refused', refusal: { status: 402 } });
    } finally {
      routes.current = current;
      open();
    }
  });

  it('lists models only for a key in force: a revoked one is refused with 401', async () => {
    const key = await newKey();
    expect((await owner.client.delete(`/keys/${key.id}`)).status).toBe(200);
    await expect(sdk(key.api_key).models.list()).rejects.toBeInstanceOf(OpenAI.AuthenticationError);
  });
});
