import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { costMicro, startBench, type Bench } from './gateway-attack-harness.js';

/**
 * Every answer is billed for what it generated, whatever the upstream counted: usage missing or
 * nonsensical is estimated from the answer's text, and a `stream` that is not a boolean is
 * refused before anything is forwarded (issue 51, defect 7).
 */

vi.setConfig({ testTimeout: 60_000, hookTimeout: 120_000 });

let bench: Bench;

beforeAll(async () => {
  bench = await startBench({ timeoutMs: 10_000 });
  const completion = (content: string, usage: unknown) => ({
    id: 'chatcmpl-1',
    object: 'chat.completion',
    model: 'gpt-4o-mini',
    choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
    ...(usage === undefined ? {} : { usage }),
  });
  bench.script('no usage', (_request, response) => {
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(JSON.stringify(completion(ANSWER, undefined)));
  });
  bench.script('negative usage', (_request, response) => {
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(JSON.stringify(completion(ANSWER, { prompt_tokens: -5, completion_tokens: -90, total_tokens: -95 })));
  });
  bench.script('absurd usage', (_request, response) => {
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(JSON.stringify(completion(ANSWER, { prompt_tokens: 2.5, completion_tokens: 1e300 })));
  });
  // A tool call streamed in two argument deltas, without usage: its arguments are what it generated.
  bench.script('streamed tool call', (_request, response) => {
    response.writeHead(200, { 'content-type': 'text/event-stream' });
    const call = (fn: Record<string, string>) =>
      `data: ${JSON.stringify({ object: 'chat.completion.chunk', choices: [{ index: 0, delta: { tool_calls: [{ index: 0, function: fn }] } }] })}\n\n`;
    response.write(call({ name: '', arguments: ANSWER.slice(0, 60) }));
    response.write(call({ arguments: ANSWER.slice(60) }));
    response.end('data: [DONE]\n\n');
  });
  bench.script('negative streamed usage', (_request, response) => {
    response.writeHead(200, { 'content-type': 'text/event-stream' });
    const chunk = (body: unknown) => `data: ${JSON.stringify(body)}\n\n`;
    response.write(chunk({ object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content: ANSWER } }] }));
    response.write(
      chunk({ object: 'chat.completion.chunk', choices: [], usage: { prompt_tokens: 3, completion_tokens: -40 } }),
    );
    response.end('data: [DONE]\n\n');
  });
});
afterAll(async () => {
  await bench?.close();
});

/** 120 characters: 30 tokens estimated, four characters a token. */
const ANSWER =
  'An answer of exactly one hundred and twenty characters, written to be counted by a gateway that estimates its tokens....';

const post = (gateway: string, apiKey: string, body: Record<string, unknown>) =>
  request(`${gateway}/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });

const chat = (script: string, extra: Record<string, unknown> = {}) => ({
  model: 'openai/gpt-4o-mini',
  messages: [{ role: 'user', content: script }],
  ...extra,
});

/** openai/gpt-4o-mini: 42 micro-PKR a prompt token, 168 a generated one; prompt estimated from its characters. */
const estimatedCost = (prompt: string, generatedCharacters: number) =>
  Math.max(1, Math.ceil(prompt.length / 4)) * 42 + Math.ceil(generatedCharacters / 4) * 168;

describe.each(['in-process', 'own-process'] as const)(
  'the gateway %s bills what the upstream did not count',
  (name) => {
    const url = () => bench.gateways.find((gateway) => gateway.name === name)!.url;

    it.each(['no usage', 'negative usage', 'absurd usage'])(
      'estimates the output of a non-streamed answer with %s from its content',
      async (script) => {
        const key = await bench.newKey();
        const answer = await post(url(), key.api_key, chat(script));
        expect(answer.statusCode).toBe(200);
        await answer.body.text();
        const [row] = await bench.rowsOf(key.id, 1);
        expect(row!.metrics).toMatchObject({ tokens_generated: 30, tokens_estimated: true });
        expect(costMicro(row!)).toBe(estimatedCost(script, ANSWER.length));
        expect(await bench.settledSpend(key.id, costMicro(row!))).toBe(costMicro(row!));
      },
    );

    it('estimates a streamed answer whose usage chunk counts negative tokens', async () => {
      const key = await bench.newKey();
      const answer = await post(url(), key.api_key, chat('negative streamed usage', { stream: true }));
      expect(answer.statusCode).toBe(200);
      expect(await answer.body.text()).toContain('[DONE]');
      const [row] = await bench.rowsOf(key.id, 1);
      expect(row!.metrics).toMatchObject({ tokens_generated: 30, tokens_estimated: true });
      expect(costMicro(row!)).toBe(estimatedCost('negative streamed usage', ANSWER.length));
    });

    it('estimates a streamed tool call without usage from its arguments', async () => {
      const key = await bench.newKey();
      const answer = await post(url(), key.api_key, chat('streamed tool call', { stream: true }));
      expect(answer.statusCode).toBe(200);
      expect(await answer.body.text()).toContain('[DONE]');
      const [row] = await bench.rowsOf(key.id, 1);
      expect(row!.metrics).toMatchObject({ tokens_generated: 30, tokens_estimated: true });
      expect(costMicro(row!)).toBe(estimatedCost('streamed tool call', ANSWER.length));
    });

    it.each([['yes'], [1], [{}]])('refuses stream: %j with 400 in OpenAI shape, forwarding nothing', async (stream) => {
      const key = await bench.newKey();
      const before = bench.upstreamRequests();
      const answer = await post(url(), key.api_key, chat('no usage', { stream }));
      expect(answer.statusCode).toBe(400);
      expect(answer.headers['content-type']).toMatch(/^application\/json/);
      const body = (await answer.body.json()) as { error: { message: string; type: string; code: unknown } };
      expect(body.error).toMatchObject({ type: 'invalid_request_error', code: null });
      expect(body.error.message).toMatch(/stream/);
      expect(bench.upstreamRequests()).toBe(before);
      const [row] = await bench.rowsOf(key.id, 1);
      expect(row!.status).toBe(400);
      expect(costMicro(row!)).toBe(0);
    });
  },
);
