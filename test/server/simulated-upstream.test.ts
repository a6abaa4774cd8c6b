import OpenAI, {
  APIConnectionError,
  APIConnectionTimeoutError,
  APIError,
  AuthenticationError,
  InternalServerError,
  RateLimitError,
} from 'openai';
import type { ChatCompletionChunk, ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import { createHook } from 'node:async_hooks';
import { channel } from 'node:diagnostics_channel';
import type { ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import {
  startSimulatedUpstream,
  type SimulatedUpstream,
  type SimulatedUpstreamOptions,
} from '../../server/gateway/simulated-upstream.js';

/**
 * The simulated provider, read by the official `openai` SDK: if the SDK takes its answers,
 * errors and streams for what they claim to be, so will a gateway written against the same API.
 */

const KEY = 'sk-sim-test';
const MESSAGES: ChatCompletionMessageParam[] = [
  { role: 'system', content: 'You are terse.' },
  { role: 'user', content: 'Hello there, simulated upstream!' },
];
// ceil(14 / 4) + 4 + ceil(32 / 4) + 4
const MESSAGES_TOKENS = 20;

const started: SimulatedUpstream[] = [];
afterEach(async () => {
  for (const upstream of started.splice(0)) await upstream.close();
});

async function upstream(options: SimulatedUpstreamOptions = {}): Promise<SimulatedUpstream> {
  const made = await startSimulatedUpstream({ apiKey: KEY, realistic: false, ...options });
  started.push(made);
  return made;
}

/** No retries: each mode must reach the test as the SDK first sees it, and a 429 would wait its retry-after. */
function client(target: SimulatedUpstream, extra: { apiKey?: string; timeout?: number } = {}): OpenAI {
  return new OpenAI({ apiKey: extra.apiKey ?? KEY, baseURL: target.url, maxRetries: 0, timeout: extra.timeout });
}

async function collect(stream: AsyncIterable<ChatCompletionChunk>): Promise<ChatCompletionChunk[]> {
  const chunks: ChatCompletionChunk[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  return chunks;
}

function assembled(chunks: ChatCompletionChunk[]): string {
  return chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join('');
}

/**
 * Timers scheduled on the server's side and neither fired nor cleared: Timeouts descended, by
 * async_hooks' trigger ids, from a server-side HTTP parser (the client, undici, has none), and
 * holding the process open (Node's own unref'd Date-header cache is not the simulator's).
 */
const serverSide = new Set<number>();
const serverTimers = new Map<number, NodeJS.Timeout>();
createHook({
  init(id, type, trigger, resource) {
    if (type !== 'HTTPINCOMINGMESSAGE' && !serverSide.has(trigger)) return;
    serverSide.add(id);
    if (type === 'Timeout') serverTimers.set(id, resource as NodeJS.Timeout);
  },
  destroy(id) {
    serverTimers.delete(id);
  },
}).enable();

function pendingServerTimers(): number {
  return [...serverTimers.values()].filter((timer) => timer.hasRef()).length;
}

/**
 * The server's responses not yet closed, seen through Node's own HTTP diagnostics channel
 * rather than through the simulator, which exposes no such count.
 */
const requestStart = channel('http.server.request.start');
const openResponses = new Set<ServerResponse>();
requestStart.subscribe((message) => {
  const { response } = message as { response: ServerResponse };
  openResponses.add(response);
  response.once('close', () => openResponses.delete(response));
});

async function until(check: () => boolean, ms = 2_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not reached in time');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('simulated upstream', () => {
  it('answers a chat completion with its usage', async () => {
    const target = await upstream();
    const answer = await client(target).chat.completions.create({ model: 'gpt-4o-mini', messages: MESSAGES });

    expect(answer.id).toMatch(/^chatcmpl-/);
    expect(answer.object).toBe('chat.completion');
    expect(answer.model).toBe('gpt-4o-mini');
    expect(answer.created).toBeCloseTo(Date.now() / 1000, -1);
    const choice = answer.choices[0]!;
    expect(choice.message.role).toBe('assistant');
    expect(choice.message.content).toMatch(/^[A-Z][a-z]+[ ,.a-zA-Z]*\.$/);
    expect(choice.finish_reason).toBe('stop');
    const usage = answer.usage!;
    expect(usage.prompt_tokens).toBe(MESSAGES_TOKENS);
    // One token per word of the vocabulary.
    expect(usage.completion_tokens).toBe(choice.message.content!.split(' ').length);
    expect(usage.total_tokens).toBe(usage.prompt_tokens + usage.completion_tokens);
    expect(usage.prompt_tokens_details?.cached_tokens).toBe(0);

    expect(target.requests).toBe(1);
    expect(target.lastAuthorization()).toBe(`Bearer ${KEY}`);
  });

  it('lists models and refuses unknown paths in OpenAI’s shapes', async () => {
    const target = await upstream();
    const models = await client(target).models.list();
    expect(models.data.length).toBeGreaterThan(0);
    for (const model of models.data) expect(model).toMatchObject({ object: 'model', id: expect.any(String) });

    const missing = await fetch(`${target.url}/nope`, { method: 'POST', headers: { authorization: `Bearer ${KEY}` } });
    expect(missing.status).toBe(404);
    expect(await missing.json()).toEqual({
      error: { message: 'Invalid URL (POST /v1/nope)', type: 'invalid_request_error', param: null, code: null },
    });
  });

  it('is deterministic: the same seed and prompt give the same answer, streamed or not', async () => {
    const first = client(await upstream({ seed: 7 }));
    const second = client(await upstream({ seed: 7 }));
    const other = client(await upstream({ seed: 8 }));
    const plain = await first.chat.completions.create({ model: 'm', messages: MESSAGES });
    const again = await second.chat.completions.create({ model: 'm', messages: MESSAGES });
    const elsewhere = await other.chat.completions.create({ model: 'm', messages: MESSAGES });
    expect(again.choices[0]!.message.content).toBe(plain.choices[0]!.message.content);
    expect(again.usage).toEqual(plain.usage);
    expect(elsewhere.choices[0]!.message.content).not.toBe(plain.choices[0]!.message.content);

    const chunks = await collect(
      await second.chat.completions.create({
        model: 'm',
        messages: MESSAGES,
        stream: true,
        stream_options: { include_usage: true },
      }),
    );
    for (const chunk of chunks) expect(chunk.object).toBe('chat.completion.chunk');
    expect(chunks[0]!.choices[0]!.delta.role).toBe('assistant');
    expect(assembled(chunks)).toBe(plain.choices[0]!.message.content);
    // Content in several deltas, as providers send it.
    expect(chunks.filter((chunk) => chunk.choices[0]?.delta.content).length).toBeGreaterThan(2);
    const usageChunk = chunks.at(-1)!;
    expect(usageChunk.choices).toEqual([]);
    expect(usageChunk.usage).toEqual(plain.usage);
    expect(chunks.at(-2)!.choices[0]!.finish_reason).toBe('stop');

    const withoutUsage = await collect(
      await second.chat.completions.create({ model: 'm', messages: MESSAGES, stream: true }),
    );
    expect(withoutUsage.every((chunk) => chunk.usage === undefined || chunk.usage === null)).toBe(true);
    expect(withoutUsage.at(-1)!.choices[0]!.finish_reason).toBe('stop');
  });

  it('caches a deterministic share of a long prompt, in blocks of 128 tokens', async () => {
    const openai = client(await upstream());
    const messages: ChatCompletionMessageParam[] = [{ role: 'user', content: 'lorem ipsum '.repeat(700) }];
    const answer = await openai.chat.completions.create({ model: 'm', messages });
    const usage = answer.usage!;
    expect(usage.prompt_tokens).toBe(2104);
    const cached = usage.prompt_tokens_details!.cached_tokens!;
    expect(cached).toBeGreaterThan(0);
    expect(cached % 128).toBe(0);
    expect(cached).toBeLessThan(usage.prompt_tokens);
    expect((await openai.chat.completions.create({ model: 'm', messages })).usage).toEqual(usage);
  });

  it('stops at max_tokens with finish_reason length', async () => {
    const openai = client(await upstream());
    const full = await openai.chat.completions.create({ model: 'm', messages: MESSAGES });
    const cut = await openai.chat.completions.create({ model: 'm', messages: MESSAGES, max_tokens: 3 });
    expect(cut.choices[0]!.finish_reason).toBe('length');
    expect(cut.usage!.completion_tokens).toBe(3);
    expect(full.choices[0]!.message.content!.startsWith(cut.choices[0]!.message.content!)).toBe(true);

    const chunks = await collect(
      await openai.chat.completions.create({
        model: 'm',
        messages: MESSAGES,
        max_completion_tokens: 3,
        stream: true,
        stream_options: { include_usage: true },
      }),
    );
    expect(assembled(chunks)).toBe(cut.choices[0]!.message.content);
    expect(chunks.at(-2)!.choices[0]!.finish_reason).toBe('length');
    expect(chunks.at(-1)!.usage!.completion_tokens).toBe(3);
  });

  it('answers 500 when asked by header or by a model named -error', async () => {
    const openai = client(await upstream());
    const byHeader = openai.chat.completions.create(
      { model: 'm', messages: MESSAGES },
      { headers: { 'x-simulate': 'error-500' } },
    );
    await expect(byHeader).rejects.toBeInstanceOf(InternalServerError);
    await expect(byHeader).rejects.toMatchObject({ status: 500, type: 'server_error' });
    const byModel = openai.chat.completions.create({ model: 'gpt-4o-error', messages: MESSAGES, stream: true });
    await expect(byModel).rejects.toMatchObject({ status: 500 });
    await expect(byModel).rejects.toBeInstanceOf(APIError);
  });

  it('answers 429 with retry-after when rate-limited', async () => {
    const openai = client(await upstream());
    const error: unknown = await openai.chat.completions
      .create({ model: 'm', messages: MESSAGES }, { headers: { 'x-simulate': 'rate-limited' } })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(RateLimitError);
    const limited = error as RateLimitError;
    expect(limited.status).toBe(429);
    expect(limited.code).toBe('rate_limit_exceeded');
    expect(limited.headers?.get('retry-after')).toBe('1');
  });

  it('drops a stream mid-way for abort-stream, which the SDK reports as an error', async () => {
    const openai = client(await upstream());
    const stream = await openai.chat.completions.create(
      { model: 'm', messages: MESSAGES, stream: true },
      { headers: { 'x-simulate': 'abort-stream' } },
    );
    const received: ChatCompletionChunk[] = [];
    const error: unknown = await (async () => {
      for await (const chunk of stream) received.push(chunk);
    })().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(Error);
    expect(received.length).toBeGreaterThan(1);
    expect(received.some((chunk) => chunk.choices[0]?.finish_reason)).toBe(false);

    const plain = openai.chat.completions.create(
      { model: 'm', messages: MESSAGES },
      { headers: { 'x-simulate': 'abort-stream' } },
    );
    await expect(plain).rejects.toBeInstanceOf(APIConnectionError);
  });

  it('is slow when asked, and a timed-out caller leaves nothing pending', async () => {
    const target = await upstream();
    const t0 = Date.now();
    const slow = client(target, { timeout: 200 }).chat.completions.create(
      { model: 'm', messages: MESSAGES },
      { headers: { 'x-simulate': 'slow' } },
    );
    await expect(slow).rejects.toBeInstanceOf(APIConnectionTimeoutError);
    expect(Date.now() - t0).toBeLessThan(2_000);
    await until(() => openResponses.size === 0 && pendingServerTimers() === 0);
  });

  it('refuses a wrong key with 401', async () => {
    const target = await upstream();
    const wrong = client(target, { apiKey: 'sk-wrong' }).chat.completions.create({ model: 'm', messages: MESSAGES });
    await expect(wrong).rejects.toBeInstanceOf(AuthenticationError);
    await expect(wrong).rejects.toMatchObject({ status: 401, code: 'invalid_api_key' });
    expect(target.lastAuthorization()).toBe('Bearer sk-wrong');
  });

  it('refuses an unknown x-simulate mode', async () => {
    const openai = client(await upstream());
    const typo = openai.chat.completions.create(
      { model: 'm', messages: MESSAGES },
      { headers: { 'x-simulate': 'rate-limit' } },
    );
    await expect(typo).rejects.toMatchObject({ status: 400, param: 'x-simulate' });
  });

  it('paces a realistic stream: nothing before the first token, then tpot per token', async () => {
    const paced = client(await upstream({ realistic: true, ttftMs: 40, tpotMs: 4 }));
    const t0 = Date.now();
    const stream = await paced.chat.completions.create({
      model: 'm',
      messages: MESSAGES,
      stream: true,
      stream_options: { include_usage: true },
    });
    const headersAfter = Date.now() - t0;
    const chunks = await collect(stream);
    const elapsed = Date.now() - t0;
    const tokens = chunks.at(-1)!.usage!.completion_tokens;
    // chunks[0] carries the role and no text; the first delta's tokens leave with it, at the ttft.
    const firstDelta = chunks[1]!.choices[0]!.delta.content!;
    expect(headersAfter).toBeGreaterThanOrEqual(35);
    expect(elapsed).toBeGreaterThanOrEqual(35 + 4 * (tokens - firstDelta.split(' ').filter(Boolean).length) - 5);
    const unpaced = await client(await upstream()).chat.completions.create({ model: 'm', messages: MESSAGES });
    expect(assembled(chunks)).toBe(unpaced.choices[0]!.message.content);
  });

  it('stops generating when the caller aborts mid-stream', async () => {
    // A long tpot: a timer left behind by the aborted answer would outlive the check below.
    const target = await upstream({ realistic: true, ttftMs: 10, tpotMs: 1_000 });
    const openai = client(target);
    const controller = new AbortController();
    const stream = await openai.chat.completions.create(
      { model: 'm', messages: MESSAGES, stream: true },
      { signal: controller.signal },
    );
    let received = 0;
    for await (const chunk of stream) {
      expect(chunk.choices[0]?.finish_reason ?? null).toBeNull();
      // The role and the first delta leave together; the next delta is a second away.
      if (++received === 2) {
        expect(openResponses.size).toBe(1);
        expect(pendingServerTimers()).toBeGreaterThan(0);
        controller.abort();
      }
    }
    expect(received).toBe(2);
    await until(() => openResponses.size === 0 && pendingServerTimers() === 0, 500);
    expect(target.requests).toBe(1);
  });
});
