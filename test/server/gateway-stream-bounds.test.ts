import { readFileSync } from 'node:fs';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { costMicro, startBench, type Bench } from './gateway-attack-harness.js';

/**
 * A stream costs the gateway what its events are, not more: one huge event is cut at a bound
 * (issue 51, defect 4), and a caller that stops reading stops the gateway reading from the
 * upstream, up to the gateway's timeout (defect 5).
 */

vi.setConfig({ testTimeout: 60_000, hookTimeout: 120_000 });

/** The gateway's timeout where a test waits for it to cut a stream. */
const TIMEOUT_MS = 8000;
/**
 * Where a stream is to end whole after its caller stalled it: 120 MiB of events and a stall of a
 * second took 2.3-2.9 s alone, and over 8 s once, during the full suite on two cores.
 */
const PATIENT_TIMEOUT_MS = 45_000;
const MIB = 1024 * 1024;

/**
 * What the kernel lets the four socket buffers between the upstream and a caller hold: two
 * receiving (the caller's, the gateway's from the upstream) and two sending. Linux grows each up
 * to its `tcp_rmem` and `tcp_wmem` maximum (32 MiB to receive on some machines: a caller who reads
 * nothing was once found holding 41.7 MB in flight against a bound of 24), else 20 MiB in all.
 */
function socketBufferBytes(): number {
  const largest = (file: string) => Number(readFileSync(file, 'utf8').trim().split(/\s+/).at(-1));
  try {
    const bytes = 2 * largest('/proc/sys/net/ipv4/tcp_rmem') + 2 * largest('/proc/sys/net/ipv4/tcp_wmem');
    return Number.isSafeInteger(bytes) && bytes > 0 ? bytes : 20 * MIB;
  } catch {
    return 20 * MIB;
  }
}

/** What may sit in the buffers between the upstream and a caller who reads nothing (sockets, undici's). */
const IN_FLIGHT_BYTES = socketBufferBytes() + 4 * MIB;
/** What the endless upstream sends at most: far more than any buffer between it and the caller. */
const ENDLESS_BYTES = IN_FLIGHT_BYTES + 40 * MIB;
/** One event bigger than the gateway holds (4 Mi characters). */
const HUGE_EVENT = 6 * 1024 * 1024;

let bench: Bench;
let patient: Bench;
/** The endless upstream's state, for the latest request it took (the tests run one at a time). */
const endless = new Map<string, { sent: number; waiting: boolean; finished: boolean; drainedAt: number }>();
/** Each answer of the huge-event upstream, latest last: whether it was closed (it never ends by itself). */
const huge: { closed: boolean }[] = [];

const delta = (content: string) =>
  `data: ${JSON.stringify({ object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content } }] })}\n\n`;

/** The upstream's answers, on either bench. */
function addScripts(on: Bench): void {
  on.script('huge event', (_request, response) => {
    const state = { closed: false };
    huge.push(state);
    response.on('close', () => (state.closed = true));
    response.writeHead(200, { 'content-type': 'text/event-stream' });
    response.write(delta('Before. '));
    // One event of HUGE_EVENT characters, written in pieces as a socket delivers it, then more
    // deltas for as long as they are taken: only the gateway's closing the answer ends it.
    const event = delta('x'.repeat(HUGE_EVENT));
    const more = delta('More. ');
    let at = 0;
    const next = () => {
      while (!response.destroyed) {
        const piece = at < event.length ? event.slice(at, at + 64 * 1024) : more;
        at += piece.length;
        if (!response.write(piece)) return void response.once('drain', next);
      }
    };
    response.on('error', () => {});
    next();
  });
  // Deltas of 16 KiB until ENDLESS_BYTES are sent, each written only once the last was taken.
  on.script('endless', (_request, response) => {
    const state = { sent: 0, waiting: false, finished: false, drainedAt: Date.now() };
    endless.set('latest', state);
    response.writeHead(200, { 'content-type': 'text/event-stream' });
    const piece = delta('y'.repeat(16 * 1024));
    const next = () => {
      state.waiting = false;
      state.drainedAt = Date.now();
      while (state.sent < ENDLESS_BYTES) {
        state.sent += piece.length;
        if (!response.write(piece)) {
          state.waiting = true;
          return void response.once('drain', next);
        }
      }
      state.finished = true;
      response.end('data: [DONE]\n\n');
    };
    response.on('error', () => {});
    response.on('close', () => (state.waiting = false));
    next();
  });
}

beforeAll(async () => {
  [bench, patient] = await Promise.all([
    startBench({ timeoutMs: TIMEOUT_MS }),
    startBench({ timeoutMs: PATIENT_TIMEOUT_MS }),
  ]);
  addScripts(bench);
  addScripts(patient);
});
afterAll(async () => {
  await Promise.all([bench?.close(), patient?.close()]);
});

/** A streamed chat request whose answer the test reads (or not) itself. */
function open(gateway: string, apiKey: string, script: string): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const call = httpRequest(`${gateway}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
    });
    call.on('response', resolve);
    call.on('error', reject);
    call.end(
      JSON.stringify({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: script }], stream: true }),
    );
  });
}

async function waitFor(condition: () => boolean, what: string, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((done) => setTimeout(done, 20));
  }
}

describe.each(['in-process', 'own-process'] as const)('the gateway %s bounds what a stream costs it', (name) => {
  const url = (on = bench) => on.gateways.find((gateway) => gateway.name === name)!.url;

  it('cuts a stream at an event larger than it holds: an upstream error, with a row billed for what came before', async () => {
    const key = await bench.newKey();
    const answer = await open(url(), key.api_key, 'huge event');
    expect(answer.statusCode).toBe(200);
    let text = '';
    answer.setEncoding('utf8');
    await new Promise<void>((done) => {
      answer.on('data', (part: string) => (text += part));
      answer.on('end', done);
      answer.on('error', () => done());
      answer.on('close', done);
    });
    expect(text).toContain('Before. ');
    expect(text).not.toContain('[DONE]');
    expect(text.length).toBeLessThan(HUGE_EVENT);
    expect(text).toMatch(/"type":"upstream_error"/);
    const [row] = await bench.rowsOf(key.id, 1);
    expect(row!.status).toBe(200);
    expect(row!.status_detail.termination_reason).toBe('upstream_stream_aborted');
    expect(row!.status_detail.upstream_error).toMatch(/event/);
    expect(costMicro(row!)).toBeGreaterThan(0);
    // The upstream's answer is ended too, not left sending into a connection nobody reads.
    await waitFor(() => huge.at(-1)?.closed === true, "the upstream's answer to be closed");
  });

  it('stops reading from the upstream while the caller reads nothing, and hands on all of it once they read again', async () => {
    const key = await patient.newKey();
    endless.delete('latest');
    const answer = await open(url(patient), key.api_key, 'endless');
    answer.pause();
    await waitFor(() => endless.has('latest'), 'the upstream request');
    const state = endless.get('latest')!;
    // Stalled: the upstream's last write has waited for the gateway for a second, or it sent everything.
    await waitFor(() => state.finished || (state.waiting && Date.now() - state.drainedAt > 1000), 'a stall');
    expect(state.finished).toBe(false);
    expect(state.sent).toBeLessThan(IN_FLIGHT_BYTES);
    let received = 0;
    let tail = '';
    answer.on('data', (part: Buffer) => {
      received += part.length;
      tail = (tail + part.toString('latin1')).slice(-64);
    });
    const ended = new Promise((done) => answer.on('end', done));
    answer.resume();
    await ended;
    expect(state.finished).toBe(true);
    expect(tail).toContain('[DONE]');
    expect(received).toBe(state.sent + 'data: [DONE]\n\n'.length);
    const [row] = await patient.rowsOf(key.id, 1);
    expect(row!.status_detail.termination_reason).toBe('success');
    expect(costMicro(row!)).toBeGreaterThan(0);
  });

  it("cuts a caller that never reads again at the gateway's timeout, with a row", async () => {
    const key = await bench.newKey();
    endless.delete('latest');
    const answer = await open(url(), key.api_key, 'endless');
    answer.pause();
    await waitFor(() => endless.has('latest'), 'the upstream request');
    const state = endless.get('latest')!;
    const [row] = await bench.rowsOf(key.id, 1);
    expect(row!.status_detail.termination_reason).toBe('proxy_guillotine');
    expect(state.finished).toBe(false);
    expect(state.sent).toBeLessThan(IN_FLIGHT_BYTES);
    expect(costMicro(row!)).toBeGreaterThan(0);
    answer.destroy();
  });
});
