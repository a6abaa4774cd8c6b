import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startBench, type Bench } from './gateway-attack-harness.js';

/**
 * How a stream's end reaches its caller: the last events and the end of the answer leave the
 * gateway together, as the upstream sent them, and neither ever waits for an upstream that is
 * slow to close its answer after saying it was done.
 */

vi.setConfig({ testTimeout: 30_000, hookTimeout: 120_000 });

/** How long the lingering upstream keeps its answer open after `[DONE]`. */
const LINGER_MS = 1500;

let bench: Bench;

const delta = (content: string) =>
  `data: ${JSON.stringify({ object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content } }] })}\n\n`;
const STREAM = delta('Hello') + delta(', world') + 'data: [DONE]\n\n';

beforeAll(async () => {
  bench = await startBench({ timeoutMs: 10_000 });
  // The whole answer in one write, the end with it: an upstream answering from a cache.
  bench.script('at once', (_request, response) => {
    response.writeHead(200, { 'content-type': 'text/event-stream' });
    response.end(STREAM);
  });
  // The same, longer than a socket's 16 KiB mark, past which a write asks its writer to wait.
  bench.script('at once, long', (_request, response) => {
    response.writeHead(200, { 'content-type': 'text/event-stream' });
    response.end(
      Array.from({ length: 200 }, (_, i) => delta(`${i} ${'word '.repeat(20)}`)).join('') + 'data: [DONE]\n\n',
    );
  });
  // Its first content, then its last events, then its end only later.
  bench.script('lingering', (_request, response) => {
    response.writeHead(200, { 'content-type': 'text/event-stream' });
    response.write(delta('Hello'));
    setTimeout(() => response.write(delta(', world') + 'data: [DONE]\n\n'), 100);
    setTimeout(() => response.end(), 100 + LINGER_MS);
  });
});
afterAll(async () => {
  await bench?.close();
});

/** What the caller's socket read, one entry per read, with when (performance.now()), up to the end of the chunked answer. */
function reads(gateway: string, apiKey: string, script: string): Promise<{ text: string; at: number }[]> {
  const url = new URL(`${gateway}/chat/completions`);
  const body = JSON.stringify({
    model: 'openai/gpt-4o-mini',
    messages: [{ role: 'user', content: script }],
    stream: true,
  });
  return new Promise((resolve, reject) => {
    const socket = connect(Number(url.port), url.hostname);
    const got: { text: string; at: number }[] = [];
    socket.setEncoding('latin1');
    socket.on('data', (text: string) => {
      got.push({ text, at: performance.now() });
      if (
        got
          .map((read) => read.text)
          .join('')
          .endsWith('\r\n0\r\n\r\n')
      ) {
        socket.destroy();
        resolve(got);
      }
    });
    socket.on('error', reject);
    socket.on('close', () => reject(new Error(`closed before the answer's end: ${JSON.stringify(got)}`)));
    socket.write(
      `POST ${url.pathname} HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: Bearer ${apiKey}\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
  });
}

describe.each(['in-process', 'own-process'] as const)('the gateway %s ends a stream', (name) => {
  const url = () => bench.gateways.find((gateway) => gateway.name === name)!.url;

  it('without holding its last events until an upstream that said [DONE] closes its answer', async () => {
    const key = await bench.newKey();
    const got = await reads(url(), key.api_key, 'lingering');
    const done = got.find((read) => read.text.includes('data: [DONE]'))!;
    const end = got.at(-1)!;
    // [DONE] as soon as the upstream sent it, the answer's end once the upstream ended its own.
    expect(end.at - done.at).toBeGreaterThan(LINGER_MS / 2);
    expect(done.text).not.toContain('\r\n0\r\n\r\n');
    const [row] = await bench.rowsOf(key.id, 1);
    expect(row!.status_detail.termination_reason).toBe('success');
  });
});

// A gateway in the test's own process shares its event loop: the test reads only once the turn that
// wrote both is over, however many writes it took. One in a process of its own is read as it writes.
describe('the gateway in a process of its own', () => {
  const url = () => bench.gateways.find((gateway) => gateway.name === 'own-process')!.url;

  it('ends a stream with its last events in the same write, when the upstream sent them and its end together', async () => {
    const key = await bench.newKey();
    // Several answers: the two writes of before could now and then be read together by chance.
    for (let i = 0; i < 6; i++) {
      const got = await reads(url(), key.api_key, i % 2 === 0 ? 'at once' : 'at once, long');
      const last = got.at(-1)!.text;
      expect(last).toContain('data: [DONE]');
      expect(last.endsWith('\r\n0\r\n\r\n')).toBe(true);
      if (i % 2 === 1) expect(got.map((read) => read.text).join('')).toContain(`199 ${'word '.repeat(20)}`);
    }
    const rows = await bench.rowsOf(key.id, 6);
    expect(rows.map((row) => row.status_detail.termination_reason)).toEqual(Array(6).fill('success'));
  });
});
