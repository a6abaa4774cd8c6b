import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { PLATFORM_KEY, startBench, type Bench } from './gateway-attack-harness.js';

/**
 * A stream passed through reaches the caller as the upstream wrote it, less what the gateway
 * leaves out (a malformed event; the usage event of a caller who did not ask for it) and with the
 * provider key redacted, however those fall in what arrived together.
 */

vi.setConfig({ testTimeout: 60_000, hookTimeout: 120_000 });

let bench: Bench;
/** The events the upstream writes, in one write: each a whole event with its blank line. */
let events: { first: string; malformed: string; keyed: string; usage: string; done: string };

beforeAll(async () => {
  bench = await startBench({ timeoutMs: 10_000 });
  const event = (body: unknown) => `data: ${JSON.stringify(body)}\n\n`;
  const delta = (content: string) => ({
    id: 'chatcmpl-pass',
    object: 'chat.completion.chunk',
    choices: [{ index: 0, delta: { content }, logprobs: null, finish_reason: null }],
  });
  events = {
    first: event(delta('Hello, ')),
    malformed: 'data: {"choices": [\n\n',
    keyed: event(delta(`the key was ${PLATFORM_KEY} and ${PLATFORM_KEY}.`)),
    usage: event({ id: 'chatcmpl-pass', choices: [], usage: { prompt_tokens: 9, completion_tokens: 12 } }),
    done: 'data: [DONE]\n\n',
  };
  bench.script('pass', (_request, response) => {
    response.writeHead(200, { 'content-type': 'text/event-stream' });
    const { first, malformed, keyed, usage, done } = events;
    response.end(first + malformed + keyed + usage + done);
  });
});
afterAll(async () => {
  await bench?.close();
});

async function streamed(gateway: string, apiKey: string, extra: Record<string, unknown>): Promise<string> {
  const answer = await request(`${gateway}/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      model: 'openai/gpt-4o-mini',
      messages: [{ role: 'user', content: 'pass' }],
      stream: true,
      ...extra,
    }),
  });
  expect(answer.statusCode).toBe(200);
  return answer.body.text();
}

describe.each(['in-process', 'own-process'] as const)('a stream passed through the gateway %s', (name) => {
  const url = () => bench.gateways.find((gateway) => gateway.name === name)!.url;
  const redacted = () => events.keyed.replaceAll(PLATFORM_KEY, '[redacted]');

  it('reaches a caller who did not ask for usage as sent, less the malformed and the usage events', async () => {
    const key = await bench.newKey();
    const text = await streamed(url(), key.api_key, {});
    expect(text).toBe(events.first + redacted() + events.done);
    expect(text).not.toContain(PLATFORM_KEY);
  });

  it('keeps the usage event for a caller who asked for it', async () => {
    const key = await bench.newKey();
    const text = await streamed(url(), key.api_key, { stream_options: { include_usage: true } });
    expect(text).toBe(events.first + redacted() + events.usage + events.done);
    const [row] = await bench.rowsOf(key.id, 1);
    expect(row!.metrics.tokens_generated).toBe(12);
  });
});
