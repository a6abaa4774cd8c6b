import OpenAI, { APIError } from 'openai';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { parseRoutesFile } from '../../server/domain/routes-file.js';
import { startGateway } from './gateway-harness.js';
import { startFaultUpstream, type Fault, type FaultUpstream } from './fault-upstream.js';
import { register, startServer, type TestClient, type TestServer } from './harness.js';

/**
 * Failover, end to end: a route over two providers, each a fault-injecting upstream of its own
 * (a real HTTP server), the routes document applied as an operator does, the official openai
 * package with its own retries off, and the rows read back through the API. For each failure:
 * what the caller gets, how many attempts each target saw and when, and the row.
 */

vi.setConfig({ testTimeout: 30_000, hookTimeout: 60_000 });

const FLUSH_MS = 50;
/** Short bounds, so that every timeout is seen within a test. */
const FAILOVER = {
  timeout_ms: 8000,
  answer_timeout_ms: 600,
  first_byte_timeout_ms: 500,
  stream_idle_timeout_ms: 500,
  retries: 1,
  max_attempts: 4,
  backoff_ms: 20,
  retry_after_max_ms: 1500,
  breaker_failures: 3,
  breaker_cooldown_ms: 800,
};

let server: TestServer;
let gateway: FastifyInstance;
let gatewayUrl: string;
let alpha: FaultUpstream;
let beta: FaultUpstream;
let owner: { client: TestClient };
let projectId: string;
let scenario = 0;

beforeAll(async () => {
  server = await startServer({ gatewayFlushMs: FLUSH_MS });
  [alpha, beta] = await Promise.all([startFaultUpstream({ seed: 1 }), startFaultUpstream({ seed: 2 })]);
  ({ gateway, url: gatewayUrl } = await startGateway(server, { byProvider: {}, fallback: null }));
  owner = await register(server);
  projectId = (await owner.client.get('/projects')).body.projects[0].id;
});
afterAll(async () => {
  await gateway?.close();
  await Promise.all([alpha?.close(), beta?.close()]);
  await server?.close();
});

interface Route {
  id: string;
  /** The models each provider is asked for: unique to the scenario, so breakers start closed. */
  a: string;
  b: string;
}

/**
 * A route of its own for a scenario (`alpha` first, then `beta`), applied as a new version of the
 * document with everything before it kept.
 */
async function route(strategy: 'fallback' | 'loadbalance' = 'fallback', bMatchesA = false): Promise<Route> {
  scenario += 1;
  const a = `a-model-${scenario}`;
  const b = bMatchesA ? a : `b-model-${scenario}`;
  const id = `test/failover-${scenario}`;
  const stored = await server.app.control.routes.current();
  const yaml = JSON.stringify({
    failover: FAILOVER,
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
        strategy,
        targets: [
          { provider: 'alpha', model: a },
          { provider: 'beta', model: b },
        ],
      },
    },
  });
  const checked = parseRoutesFile(yaml, {});
  if (!checked.ok) throw new Error(JSON.stringify(checked.problems));
  await server.app.control.write((tx) => tx.routes.apply(checked.document, 'test', Date.now()));
  return { id, a, b };
}

async function newKey(): Promise<{ id: string; api_key: string }> {
  const answer = await owner.client.post('/keys', { project_id: projectId, name: `k${Math.random()}` });
  expect(answer.status, JSON.stringify(answer.body)).toBe(201);
  // The breaker scenarios send many requests a minute: the key's own limit is not what they test.
  const raised = await owner.client.patch(`/keys/${answer.body.id}`, { rate_limit_rpm: 10_000 });
  expect(raised.status, JSON.stringify(raised.body)).toBe(200);
  return answer.body;
}

const sdk = (apiKey: string) => new OpenAI({ apiKey, baseURL: gatewayUrl, maxRetries: 0 });

interface AttemptRow {
  target: string;
  status: number | null;
  error: string | null;
  ms: number;
  decision: string;
}

interface Row {
  status: number;
  key: { id: string } | null;
  financials: { cost_pkr: number };
  metrics: { prompt_tokens: number | null; tokens_generated: number };
  status_detail: { termination_reason: string; upstream_error: string | null };
  upstream: { model: string; provider: string | null; attempts: AttemptRow[] | null } | null;
}

/** The key's rows, newest first, once `count` of them are in the request log. */
async function rowsOf(keyId: string, count: number): Promise<Row[]> {
  for (let attempt = 0; attempt < 100; attempt++) {
    const page = await owner.client.get('/analytics/requests?time_range=1h&limit=200');
    const rows = (page.body.requests as Row[]).filter((candidate) => candidate.key?.id === keyId);
    if (rows.length >= count) return rows;
    await new Promise((resolve) => setTimeout(resolve, FLUSH_MS));
  }
  throw new Error(`fewer than ${count} rows for key ${keyId}`);
}

const rowOf = async (keyId: string): Promise<Row> => (await rowsOf(keyId, 1))[0]!;

const messages = [{ role: 'user' as const, content: 'Tell me about failover.' }];

/** Asks once, not streamed; the answer with its headers, or the error the SDK raised. */
async function ask(apiKey: string, model: string) {
  try {
    const { data, response } = await sdk(apiKey).chat.completions.create({ model, messages }).withResponse();
    return { data, headers: response.headers, error: null };
  } catch (error) {
    if (!(error instanceof APIError)) throw error;
    return { data: null, headers: error.headers, error };
  }
}

/** Streams once: the text received, and the error raised mid-stream or before it. */
async function streamed(apiKey: string, model: string) {
  let text = '';
  try {
    const { data, response } = await sdk(apiKey)
      .chat.completions.create({ model, messages, stream: true })
      .withResponse();
    for await (const chunk of data) text += chunk.choices[0]?.delta.content ?? '';
    return { text, headers: response.headers, error: null };
  } catch (error) {
    if (!(error instanceof APIError)) throw error;
    return { text, headers: error.headers, error };
  }
}

const decisions = (row: Row) => row.upstream?.attempts?.map((entry) => `${entry.target} ${entry.decision}`);

function script(upstream: FaultUpstream, model: string, ...faults: Fault[]): void {
  upstream.script(model, faults);
}

describe('failover before the first byte, through the official openai package (its retries off)', () => {
  it('429 with Retry-After: the next target at once; the first is not asked again while it waits', async () => {
    const r = await route();
    script(alpha, r.a, { kind: 'status', status: 429, retryAfter: '30' });
    const key = await newKey();
    const answer = await ask(key.api_key, r.id);
    expect(answer.error).toBeNull();
    expect(answer.headers.get('x-svc-served-by')).toBe(`beta/${r.b}`);
    expect(answer.headers.get('x-svc-attempts')).toBe('2');
    expect(answer.data!.model).toBe(r.b);
    // While its Retry-After runs, the next request goes to beta first.
    await ask(key.api_key, r.id);
    expect(alpha.attemptsOf(r.a)).toHaveLength(1);
    expect(beta.attemptsOf(r.b)).toHaveLength(2);
    const row = await rowOf(key.id);
    expect(row.upstream?.model).toBe(r.b);
    expect(row.upstream?.provider).toBe('beta');
  });

  it('429 with a short Retry-After and nowhere else to go: waited out on the same target, then served', async () => {
    const r = await route();
    script(alpha, r.a, { kind: 'status', status: 429, retryAfter: '1' }, { kind: 'ok' });
    beta.script(r.b, [{ kind: 'status', status: 503 }]);
    const key = await newKey();
    const answer = await ask(key.api_key, r.id);
    expect(answer.error).toBeNull();
    expect(answer.headers.get('x-svc-served-by')).toBe(`alpha/${r.a}`);
    const [first, second] = alpha.attemptsOf(r.a);
    // Beta (503, retried once) came between, then alpha's Retry-After was honoured.
    expect(second!.at - first!.at).toBeGreaterThanOrEqual(950);
  });

  it('429 without Retry-After: the next target at once, no backoff spent on the first', async () => {
    const r = await route();
    script(alpha, r.a, { kind: 'status', status: 429 });
    const key = await newKey();
    const answer = await ask(key.api_key, r.id);
    expect(answer.headers.get('x-svc-served-by')).toBe(`beta/${r.b}`);
    expect(alpha.attemptsOf(r.a)).toHaveLength(1);
    expect(beta.attemptsOf(r.b)[0]!.at - alpha.attemptsOf(r.a)[0]!.at).toBeLessThan(200);
    const row = await rowOf(key.id);
    expect(decisions(row)).toEqual([`alpha/${r.a} next`, `beta/${r.b} served`]);
    expect(row.upstream?.attempts?.[0]).toMatchObject({ status: 429, error: 'rate_limited' });
  });

  it('500 once then healthy: one retry on the same target after a short backoff, served there', async () => {
    const r = await route();
    script(alpha, r.a, { kind: 'status', status: 500 }, { kind: 'ok' });
    const key = await newKey();
    const answer = await ask(key.api_key, r.id);
    expect(answer.headers.get('x-svc-served-by')).toBe(`alpha/${r.a}`);
    expect(answer.headers.get('x-svc-attempts')).toBe('2');
    const [first, second] = alpha.attemptsOf(r.a);
    expect(second!.at - first!.at).toBeGreaterThanOrEqual(10); // backoff_ms 20 with jitter: 10–30 ms
    expect(beta.attemptsOf(r.b)).toHaveLength(0);
    const row = await rowOf(key.id);
    expect(decisions(row)).toEqual([`alpha/${r.a} retried`, `alpha/${r.a} served`]);
    expect(row.status).toBe(200);
  });

  it('503 for good: retried once, then the next target; failed attempts cost nothing', async () => {
    const r = await route();
    script(alpha, r.a, { kind: 'status', status: 503 });
    const key = await newKey();
    const answer = await ask(key.api_key, r.id);
    expect(answer.headers.get('x-svc-served-by')).toBe(`beta/${r.b}`);
    expect(answer.headers.get('x-svc-attempts')).toBe('3');
    expect(alpha.attemptsOf(r.a)).toHaveLength(2);
    const row = await rowOf(key.id);
    expect(decisions(row)).toEqual([`alpha/${r.a} retried`, `alpha/${r.a} next`, `beta/${r.b} served`]);
    // The usage is the serving target's: one answer's tokens, at the route's price.
    const usage = answer.data!.usage!;
    expect(row.metrics.tokens_generated).toBe(usage.completion_tokens);
    expect(row.financials.cost_pkr).toBeCloseTo((usage.prompt_tokens * 42 + usage.completion_tokens * 168) / 1e6, 6);
  });

  it('a reset before headers: retried, then the next target', async () => {
    const r = await route();
    script(alpha, r.a, { kind: 'reset' });
    const key = await newKey();
    const answer = await ask(key.api_key, r.id);
    expect(answer.headers.get('x-svc-served-by')).toBe(`beta/${r.b}`);
    expect(alpha.attemptsOf(r.a)).toHaveLength(2);
    const row = await rowOf(key.id);
    expect(row.upstream?.attempts?.[0]).toMatchObject({ status: null, error: 'reset', decision: 'retried' });
  });

  it('no answer at all: the next target once answer_timeout_ms has passed, never the silent one again', async () => {
    const r = await route();
    script(alpha, r.a, { kind: 'silent' });
    const key = await newKey();
    const began = performance.now();
    const answer = await ask(key.api_key, r.id);
    expect(answer.headers.get('x-svc-served-by')).toBe(`beta/${r.b}`);
    expect(performance.now() - began).toBeLessThan(FAILOVER.answer_timeout_ms + 1000);
    expect(alpha.attemptsOf(r.a)).toHaveLength(1);
    const row = await rowOf(key.id);
    expect(row.upstream?.attempts?.[0]).toMatchObject({ error: 'timeout', decision: 'next' });
  });

  it('a slow first token on a stream: the next target at once, and the caller reads one whole answer', async () => {
    const r = await route();
    script(alpha, r.a, { kind: 'slow_first_token', ms: 5000 });
    const key = await newKey();
    const answer = await streamed(key.api_key, r.id);
    expect(answer.error).toBeNull();
    expect(answer.headers.get('x-svc-served-by')).toBe(`beta/${r.b}`);
    expect(answer.text).toBe(beta.contentFor(messages));
    expect(alpha.attemptsOf(r.a)).toHaveLength(1);
    const row = await rowOf(key.id);
    expect(row.upstream?.attempts?.[0]).toMatchObject({ error: 'first_byte_timeout', decision: 'next' });
    expect(row.status_detail.termination_reason).toBe('success');
  });

  it('an error event before any content: the next target, the caller never sees it', async () => {
    const r = await route();
    script(alpha, r.a, { kind: 'error_event', after: 0 });
    const key = await newKey();
    const answer = await streamed(key.api_key, r.id);
    expect(answer.error).toBeNull();
    expect(answer.text).toBe(beta.contentFor(messages));
    const row = await rowOf(key.id);
    expect(row.upstream?.attempts?.map((entry) => entry.error)).toEqual(['stream_error', 'stream_error', null]);
  });

  it('a context-length 400: the next target of another model, never the same model again', async () => {
    const r = await route();
    script(alpha, r.a, { kind: 'context_length' });
    const key = await newKey();
    const answer = await ask(key.api_key, r.id);
    expect(answer.headers.get('x-svc-served-by')).toBe(`beta/${r.b}`);
    expect(alpha.attemptsOf(r.a)).toHaveLength(1);

    const same = await route('fallback', true);
    script(alpha, same.a, { kind: 'context_length' });
    const refused = await ask(key.api_key, same.id);
    expect(refused.error?.status).toBe(400);
    expect(refused.error?.code).toBe('context_length_exceeded');
    expect(beta.attemptsOf(same.b)).toHaveLength(0);
  });

  it('a content-policy 400: returned with the provider reason, never retried anywhere', async () => {
    const r = await route();
    script(alpha, r.a, { kind: 'content_policy', reason: 'violence' });
    const key = await newKey();
    const answer = await ask(key.api_key, r.id);
    expect(answer.error?.status).toBe(400);
    expect(answer.error?.message).toContain('violence');
    expect(answer.headers.get('x-svc-attempts')).toBe('1');
    expect(beta.attemptsOf(r.b)).toHaveLength(0);
    const row = await rowOf(key.id);
    expect(row.upstream?.attempts).toEqual([expect.objectContaining({ error: 'content_policy', decision: 'served' })]);
    expect(row.financials.cost_pkr).toBe(0);
  });

  it('every target failing: the last error, once, with x-should-retry false so the SDK does not multiply it', async () => {
    const r = await route();
    script(alpha, r.a, { kind: 'status', status: 502 });
    script(beta, r.b, { kind: 'status', status: 503 });
    const key = await newKey();
    const answer = await ask(key.api_key, r.id);
    expect(answer.error?.status).toBe(503);
    expect(answer.headers.get('x-should-retry')).toBe('false');
    expect(answer.headers.get('x-svc-attempts')).toBe('4');
    // With the SDK's own retries on, it obeys the header: still four upstream attempts in all.
    const retrying = new OpenAI({ apiKey: key.api_key, baseURL: gatewayUrl, maxRetries: 2 });
    await expect(retrying.chat.completions.create({ model: r.id, messages })).rejects.toThrow();
    expect(alpha.attemptsOf(r.a).length + beta.attemptsOf(r.b).length).toBeLessThanOrEqual(8);
    // Newest first: the SDK's request may have found the breakers open and skipped both targets.
    const [again, first] = await rowsOf(key.id, 2);
    expect(first!.upstream?.attempts?.at(-1)?.decision).toBe('gave_up');
    expect(['gave_up', 'skipped']).toContain(again!.upstream?.attempts?.at(-1)?.decision);
    expect([first!.financials.cost_pkr, again!.financials.cost_pkr]).toEqual([0, 0]);
  });
});

describe('streams after their first content: never switched, never a truncated success', () => {
  it('a stream cut after some tokens ends with an error the SDK raises, recorded as upstream_stream_aborted', async () => {
    const r = await route();
    script(alpha, r.a, { kind: 'cut_after', tokens: 3 });
    const key = await newKey();
    const answer = await streamed(key.api_key, r.id);
    expect(answer.error).not.toBeNull();
    expect(answer.text.length).toBeGreaterThan(0);
    expect(beta.attemptsOf(r.b)).toHaveLength(0);
    const row = await rowOf(key.id);
    expect(row.status_detail.termination_reason).toBe('upstream_stream_aborted');
    expect(row.upstream?.attempts).toHaveLength(1);
  });

  it('a stalled stream is ended within stream_idle_timeout_ms with an error event', async () => {
    const r = await route();
    script(alpha, r.a, { kind: 'stall_after', tokens: 2 });
    const key = await newKey();
    const began = performance.now();
    const answer = await streamed(key.api_key, r.id);
    expect(performance.now() - began).toBeLessThan(FAILOVER.stream_idle_timeout_ms + 1500);
    expect(answer.error?.message).toMatch(/stopped sending/);
    const row = await rowOf(key.id);
    expect(row.status_detail.termination_reason).toBe('upstream_stream_aborted');
    expect(row.status_detail.upstream_error).toMatch(/stalled/);
  });

  it('a malformed event inside a healthy stream is skipped: the caller reads the whole answer', async () => {
    const r = await route();
    script(alpha, r.a, { kind: 'malformed_event', after: 2 });
    const key = await newKey();
    const answer = await streamed(key.api_key, r.id);
    expect(answer.error).toBeNull();
    expect(answer.text).toBe(alpha.contentFor(messages));
    expect((await rowOf(key.id)).status_detail.termination_reason).toBe('success');
  });

  it('a stream that finished but sent no [DONE] is a success; one cut before its finish is not', async () => {
    const r = await route();
    script(alpha, r.a, { kind: 'no_done' });
    const key = await newKey();
    const answer = await streamed(key.api_key, r.id);
    expect(answer.error).toBeNull();
    expect(answer.text).toBe(alpha.contentFor(messages));
    expect((await rowOf(key.id)).status_detail.termination_reason).toBe('success');
  });
});

describe('breakers', () => {
  it('a target down for a while: its breaker opens after three failures, probes find it back, traffic returns', async () => {
    const r = await route();
    const downMs = 2500;
    alpha.downFor(r.a, downMs, { kind: 'status', status: 503 });
    const outageEnds = performance.now() + downMs;
    const key = await newKey();
    let duringOutage = 0;
    let backAt: number | null = null;
    // Until alpha serves again, at most eight cooldowns after the outage (the probes' longest gap).
    while (backAt === null && performance.now() < outageEnds + 8 * FAILOVER.breaker_cooldown_ms + 1000) {
      const answer = await ask(key.api_key, r.id);
      expect(answer.error).toBeNull();
      if (performance.now() < outageEnds) duringOutage += 1;
      if (answer.headers.get('x-svc-served-by') === `alpha/${r.a}`) backAt = performance.now();
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(backAt).not.toBeNull();
    const alphaDuringOutage = alpha.attemptsOf(r.a).filter((entry) => entry.fault !== 'ok').length;
    // Three failures opened it (one request retries once), then one probe per cooldown, doubling.
    expect(alphaDuringOutage).toBeLessThanOrEqual(3 + 1 + Math.ceil(downMs / FAILOVER.breaker_cooldown_ms));
    expect(duringOutage).toBeGreaterThan(alphaDuringOutage * 3);
    // Traffic stays on alpha once back.
    const after = await ask(key.api_key, r.id);
    expect(after.headers.get('x-svc-served-by')).toBe(`alpha/${r.a}`);
  });

  it('connections refused: the next target at once, and the breaker keeps the dead one out', async () => {
    const dead = await startFaultUpstream({ seed: 3 });
    const url = dead.url;
    await dead.down();
    scenario += 1;
    const id = `test/refused-${scenario}`;
    const stored = await server.app.control.routes.current();
    const checked = parseRoutesFile(
      JSON.stringify({
        failover: FAILOVER,
        providers: { ...stored.document.providers, dead: { api: 'openai', base_url: url } },
        routes: {
          ...stored.document.routes,
          [id]: {
            kind: 'chat',
            price: { input: 42, output: 168, cache_write: 42, cache_read: 21 },
            targets: [
              { provider: 'dead', model: 'gone' },
              { provider: 'beta', model: `b-refused-${scenario}` },
            ],
          },
        },
      }),
      {},
    );
    if (!checked.ok) throw new Error(JSON.stringify(checked.problems));
    await server.app.control.write((tx) => tx.routes.apply(checked.document, 'test', Date.now()));
    const key = await newKey();
    for (let i = 0; i < 10; i++) {
      const answer = await ask(key.api_key, id);
      expect(answer.headers.get('x-svc-served-by')).toBe(`beta/b-refused-${scenario}`);
    }
    // Three refusals opened its breaker; from then on the dead target is not even tried.
    const rows = await rowsOf(key.id, 10);
    const deadAttempts = rows.flatMap((row) => row.upstream?.attempts ?? []).filter((a) => a.target === 'dead/gone');
    expect(deadAttempts).toHaveLength(3);
    expect(deadAttempts.every((entry) => entry.error === 'connect' && entry.decision === 'next')).toBe(true);
    expect(rows[0]!.upstream?.attempts).toEqual([expect.objectContaining({ decision: 'served', error: null })]);
    await dead.close();
  });
});

describe('loadbalance', () => {
  it('spreads requests by weight over healthy targets', async () => {
    const r = await route('loadbalance');
    const key = await newKey();
    const counts = new Map<string, number>();
    for (let i = 0; i < 40; i++) {
      const answer = await ask(key.api_key, r.id);
      const by = answer.headers.get('x-svc-served-by')!;
      counts.set(by, (counts.get(by) ?? 0) + 1);
    }
    // Equal weights: each gets a share; neither all nor none.
    expect(counts.get(`alpha/${r.a}`)).toBeGreaterThan(5);
    expect(counts.get(`beta/${r.b}`)).toBeGreaterThan(5);
  });
});
