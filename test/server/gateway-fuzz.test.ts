import fc from 'fast-check';
import type { ServerResponse } from 'node:http';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { PLATFORM_KEY, costMicro, startBench, type Bench } from './gateway-attack-harness.js';

/**
 * A short fuzz of the gateway's paths (issue 51, "tests that count"): bodies, headers and upstream
 * answers drawn by fast-check with a fixed seed, each request through one of the two gateways
 * (in the server's process, in its own), the upstream a loopback server of the test's answering
 * as the case says. Whatever comes: no 5xx of the gateway's own (a 502/503/504 for an upstream
 * that failed, or the upstream's own 5xx handed on, are not), every call of a known key exactly
 * one row, every answered call billed, the spend the rows' sum, no provider key anywhere.
 */

vi.setConfig({ testTimeout: 120_000, hookTimeout: 120_000 });

const RUNS = 120;
const SEED = 51;
const MODEL = 'openai/gpt-4o-mini';

let bench: Bench;

beforeAll(async () => {
  bench = await startBench({ timeoutMs: 3000, bodyTimeoutMs: 2000 });
});
afterAll(async () => {
  await bench?.close();
});

type UsageCase = 'none' | 'valid' | 'negative' | 'fraction' | 'huge' | 'strings' | 'null' | 'zero';

const usageOf = (usage: UsageCase): unknown =>
  ({
    none: undefined,
    valid: { prompt_tokens: 12, completion_tokens: 7, prompt_tokens_details: { cached_tokens: 3 } },
    negative: { prompt_tokens: -12, completion_tokens: -7 },
    fraction: { prompt_tokens: 1.5, completion_tokens: 2.25 },
    huge: { prompt_tokens: 1e15, completion_tokens: 1e300 },
    strings: { prompt_tokens: '12', completion_tokens: '7' },
    null: null,
    zero: { prompt_tokens: 0, completion_tokens: 0 },
  })[usage];

const upstreamCase = fc.record({
  status: fc.constantFrom(200, 200, 200, 200, 201, 204, 302, 400, 401, 403, 404, 429, 500, 502, 503),
  contentType: fc.constantFrom('application/json', 'text/html', 'text/event-stream', 'text/plain', null),
  retryAfter: fc.option(fc.constantFrom('1', '120', 'soon', 'Wed, 21 Oct 2026 07:28:00 GMT'), { nil: undefined }),
  body: fc.constantFrom('completion', 'sse', 'openai-error', 'html', 'empty', 'garbage', 'echo-key'),
  usage: fc.constantFrom<UsageCase>('none', 'valid', 'negative', 'fraction', 'huge', 'strings', 'null', 'zero'),
  content: fc.string({ maxLength: 200 }),
  crlf: fc.boolean(),
  done: fc.boolean(),
  noise: fc.boolean(),
  /** Where the answer's bytes are split into writes. */
  pieces: fc.array(fc.integer({ min: 1, max: 64 }), { maxLength: 8 }),
  /** Writes after which the connection is destroyed, or null: the answer ends. */
  cutAfter: fc.option(fc.integer({ min: 0, max: 6 }), { nil: null }),
});
type UpstreamCase = typeof upstreamCase extends fc.Arbitrary<infer T> ? T : never;

const callerCase = fc.record({
  gateway: fc.constantFrom(0, 1),
  auth: fc.constantFrom('key', 'key', 'key', 'key', 'unknown', 'none', 'basic'),
  contentType: fc.constantFrom('application/json', 'application/json', 'application/json; charset=utf-8', 'text/plain'),
  body: fc.constantFrom('chat', 'chat', 'chat', 'chat', 'broken-json', 'array', 'number', 'empty'),
  model: fc.constantFrom(MODEL, MODEL, MODEL, 'nobody/no-model', 42, ''),
  messages: fc.constantFrom('script', 'script', 'script', 'parts', 'empty', 'not-array', 'null-message'),
  stream: fc.constantFrom(true, true, false, undefined, null, 'yes', 1),
  streamOptions: fc.constantFrom(undefined, { include_usage: true }, { include_usage: false }, 'x'),
  maxTokens: fc.option(fc.oneof(fc.integer({ min: -5, max: 100_000 }), fc.constant('ten')), { nil: undefined }),
  n: fc.option(fc.constantFrom(1, 2, 'two'), { nil: undefined }),
  meta: fc.array(fc.tuple(fc.stringMatching(/^[a-z0-9-]{1,12}$/), fc.stringMatching(/^[ -~]{0,40}$/)), {
    maxLength: 3,
  }),
});
type CallerCase = typeof callerCase extends fc.Arbitrary<infer T> ? T : never;

/** The upstream's answer's bytes, as the case says. */
function answerText(upstream: UpstreamCase, sentKey: string): string {
  const completion = {
    id: 'chatcmpl-fuzz',
    object: 'chat.completion',
    choices: [{ index: 0, message: { role: 'assistant', content: upstream.content }, finish_reason: 'stop' }],
    ...(upstream.usage === 'none' ? {} : { usage: usageOf(upstream.usage) }),
  };
  switch (upstream.body) {
    case 'completion':
      return JSON.stringify(completion);
    case 'openai-error':
      return JSON.stringify({ error: { message: upstream.content, type: 'invalid_request_error', code: 'fuzz' } });
    case 'echo-key':
      return JSON.stringify({ error: { message: `bad key ${sentKey} at 10.0.0.12`, type: 'auth', code: null } });
    case 'html':
      return `<html><body>${upstream.content} internal host 10.0.0.12</body></html>`;
    case 'empty':
      return '';
    case 'garbage':
      return `\u0000{${upstream.content}`;
    case 'sse': {
      const end = upstream.crlf ? '\r\n\r\n' : '\n\n';
      const events: string[] = [];
      for (let at = 0; at < upstream.content.length || at === 0; at += 20) {
        const delta = { choices: [{ index: 0, delta: { content: upstream.content.slice(at, at + 20) } }] };
        events.push(`data: ${JSON.stringify(delta)}${end}`);
        if (upstream.noise) events.push(`: keep-alive${end}data: not json${end}event: other${end}`);
      }
      if (upstream.usage !== 'none')
        events.push(`data: ${JSON.stringify({ choices: [], usage: usageOf(upstream.usage) })}${end}`);
      if (upstream.done) events.push(`data: [DONE]${end}`);
      return events.join('');
    }
  }
}

function answer(upstream: UpstreamCase, response: ServerResponse, sentKey: string): void {
  const headers: Record<string, string> = {};
  if (upstream.contentType) headers['content-type'] = upstream.contentType;
  if (upstream.retryAfter) headers['retry-after'] = upstream.retryAfter;
  response.on('error', () => {});
  response.writeHead(upstream.status, headers);
  const text = Buffer.from(answerText(upstream, sentKey));
  let at = 0;
  let writes = 0;
  for (const size of upstream.pieces) {
    if (upstream.cutAfter !== null && writes >= upstream.cutAfter) break;
    response.write(text.subarray(at, at + size));
    at += size;
    writes++;
  }
  if (upstream.cutAfter !== null && writes >= upstream.cutAfter) {
    // Flushed, then gone mid-answer.
    response.write('', () => response.destroy());
    return;
  }
  response.end(text.subarray(at));
}

function callBody(caller: CallerCase, script: string): string {
  const messages = {
    script: [{ role: 'user', content: script }],
    parts: [
      { role: 'user', content: script },
      { role: 'user', content: [{ type: 'text', text: 'more' }, { type: 'image_url' }] },
    ],
    empty: [],
    'not-array': 'hello',
    'null-message': [null],
  }[caller.messages];
  const chat: Record<string, unknown> = { model: caller.model, messages };
  if (caller.stream !== undefined) chat.stream = caller.stream;
  if (caller.streamOptions !== undefined) chat.stream_options = caller.streamOptions;
  if (caller.maxTokens !== undefined) chat.max_tokens = caller.maxTokens;
  if (caller.n !== undefined) chat.n = caller.n;
  return {
    chat: JSON.stringify(chat),
    'broken-json': JSON.stringify(chat).slice(0, -3),
    array: '[1,2,3]',
    number: '42',
    empty: '',
  }[caller.body];
}

interface Outcome {
  status: number;
  text: string;
  requestId: string | undefined;
  keyed: boolean;
  upstreamStatus: number;
}

describe('the gateway under a fuzz of bodies, headers and upstream answers', () => {
  it(`keeps its promises over ${RUNS} drawn calls (seed ${SEED})`, async () => {
    const key = await bench.newKey();
    // As high as the ceiling goes: only the fuzz may refuse.
    expect((await bench.owner.client.patch(`/keys/${key.id}`, { rate_limit_rpm: 10_000 })).status).toBe(200);
    const outcomes: Outcome[] = [];
    let counter = 0;
    await fc.assert(
      fc.asyncProperty(callerCase, upstreamCase, async (caller, upstream) => {
        const script = `fuzz ${counter++}`;
        bench.script(script, (incoming, response) =>
          answer(upstream, response, (incoming.headers.authorization ?? '').replace(/^Bearer /, '')),
        );
        const authorization = {
          key: `Bearer ${key.api_key}`,
          unknown: `Bearer sk_svc_${'f'.repeat(40)}`,
          none: undefined,
          basic: 'Basic dXNlcjpwYXNz',
        }[caller.auth];
        const headers: Record<string, string> = { 'content-type': caller.contentType };
        if (authorization) headers.authorization = authorization;
        for (const [name, value] of caller.meta) headers[`x-svc-meta-${name}`] = value;
        const answered = await request(`${bench.gateways[caller.gateway]!.url}/chat/completions`, {
          method: 'POST',
          headers,
          body: callBody(caller, script),
        });
        let text = '';
        try {
          text = await answered.body.text();
        } catch {
          // A stream the upstream cut is cut for the caller too.
        }
        const outcome: Outcome = {
          status: answered.statusCode,
          text,
          requestId: answered.headers['x-request-id'] as string | undefined,
          keyed: caller.auth === 'key',
          upstreamStatus: upstream.status,
        };
        outcomes.push(outcome);
        const context = JSON.stringify({ caller, upstream, status: outcome.status, text: text.slice(0, 300) });
        // No 5xx of its own: the gateway's 500 is its error handler's, an upstream's is handed on.
        const ownFiveHundred = outcome.status === 500 && upstream.status !== 500;
        expect(ownFiveHundred || /"internal error"/.test(text), context).toBe(false);
        if (outcome.status >= 500) expect([502, 503, 504, upstream.status], context).toContain(outcome.status);
        expect(text, context).not.toContain(PLATFORM_KEY);
        if (outcome.status >= 400) {
          expect(answered.headers['content-type'], context).toMatch(/^application\/json/);
          expect(JSON.parse(text), context).toMatchObject({ error: { message: expect.any(String) } });
        }
      }),
      { numRuns: RUNS, seed: SEED, endOnFailure: true },
    );

    // Every call of the key is one row, and every answer it had is billed.
    const keyed = outcomes.filter((outcome) => outcome.keyed);
    const rows = await bench.rowsOf(key.id, keyed.length);
    expect(rows).toHaveLength(keyed.length);
    const byId = new Map(rows.map((row) => [row.req_id, row]));
    for (const outcome of keyed) {
      if (outcome.status >= 400) continue;
      const row = byId.get(outcome.requestId ?? '');
      expect(row, JSON.stringify(outcome)).toBeDefined();
      expect(costMicro(row!), JSON.stringify(outcome)).toBeGreaterThan(0);
    }
    for (const row of rows) {
      expect(row.status_detail.upstream_error ?? '').not.toContain(PLATFORM_KEY);
      if (row.status < 400) expect(costMicro(row), JSON.stringify(row)).toBeGreaterThan(0);
    }
    const total = rows.reduce((sum, row) => sum + costMicro(row), 0);
    expect(await bench.settledSpend(key.id, total)).toBe(total);
    expect(bench.logs()).not.toContain(PLATFORM_KEY);
  });
});
