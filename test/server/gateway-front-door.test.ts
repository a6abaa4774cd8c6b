import { connect, type Socket } from 'node:net';
import { request } from 'undici';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { costMicro, startBench, type Bench } from './gateway-attack-harness.js';

/**
 * The gateway checks the key on the headers, before it reads a byte of the body, and gives a
 * body it does read a deadline (issue 51, defect 3): a caller without a key in force cannot make
 * it hold megabytes, nor a slow one hold a connection open for ever.
 */

vi.setConfig({ testTimeout: 60_000, hookTimeout: 120_000 });

const BODY_TIMEOUT_MS = 1500;
/** The body: 7.9 MB less one byte, under the gateway's 8 MiB limit. */
const ANNOUNCED = 7_900_000 - 1;

let bench: Bench;

beforeAll(async () => {
  bench = await startBench({ timeoutMs: 10_000, bodyTimeoutMs: BODY_TIMEOUT_MS });
  bench.script('hello', (_request, response) => {
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(
      JSON.stringify({
        choices: [{ index: 0, message: { role: 'assistant', content: 'Hello.' }, finish_reason: 'stop' }],
        usage: { prompt_tokens: 5, completion_tokens: 2 },
      }),
    );
  });
});
/** The raw connections a test opened: a gateway that waits for their bodies would wait for ever. */
const sockets: Socket[] = [];
afterEach(() => {
  for (const socket of sockets.splice(0)) socket.destroy();
});
afterAll(async () => {
  await bench?.close();
});

interface Exchange {
  socket: Socket;
  /** What the gateway has answered so far. */
  received: () => string;
  closed: () => boolean;
}

/**
 * A POST whose headers announce ANNOUNCED bytes, of which only the first kilobyte is sent: a
 * gateway that reads the body before it checks the key waits for the rest.
 */
async function postHeadersOnly(
  gateway: string,
  authorization: string | null,
  contentType = 'application/json',
): Promise<Exchange> {
  const url = new URL(gateway);
  const socket = connect(Number(url.port), url.hostname);
  sockets.push(socket);
  await new Promise((done) => socket.once('connect', done));
  let received = '';
  let closed = false;
  socket.on('data', (part: Buffer) => (received += part.toString('latin1')));
  socket.on('close', () => (closed = true));
  socket.on('error', () => {});
  const head = [
    `POST ${url.pathname}/chat/completions HTTP/1.1`,
    `Host: ${url.host}`,
    `Content-Type: ${contentType}`,
    `Content-Length: ${ANNOUNCED}`,
    ...(authorization ? [`Authorization: ${authorization}`] : []),
  ];
  socket.write(
    `${head.join('\r\n')}\r\n\r\n{"model":"openai/gpt-4o-mini","messages":[{"role":"user","content":"${'a'.repeat(1000)}`,
  );
  return { socket, received: () => received, closed: () => closed };
}

async function waitFor(condition: () => boolean, what: string, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((done) => setTimeout(done, 20));
  }
}

const statusOf = (exchange: Exchange) => Number(/^HTTP\/1\.1 (\d{3})/.exec(exchange.received())?.[1]);
const bodyOf = (exchange: Exchange) => exchange.received().slice(exchange.received().indexOf('\r\n\r\n') + 4);

describe.each(['in-process', 'own-process'] as const)('the front door of the gateway %s', (name) => {
  const url = () => bench.gateways.find((gateway) => gateway.name === name)!.url;

  it.each([
    ['no key', null],
    ['a malformed header', 'Basic dXNlcjpwYXNz'],
    ['an unknown key', `Bearer sk_svc_${'u'.repeat(40)}`],
  ])('refuses %s with 401 before reading the body, and closes the connection', async (_what, authorization) => {
    const exchange = await postHeadersOnly(url(), authorization);
    await waitFor(() => exchange.closed() || exchange.received().includes('\r\n\r\n{'), 'an answer');
    expect(statusOf(exchange)).toBe(401);
    const body = JSON.parse(bodyOf(exchange).trim()) as { error: { type: string; code: string } };
    expect(body.error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_api_key' });
    // Nothing more is read of it: the gateway lets the connection go.
    await waitFor(exchange.closed, 'the connection to close');
  });

  it('refuses a revoked key before reading the body, with a row for it', async () => {
    const key = await bench.newKey();
    expect((await bench.owner.client.delete(`/keys/${key.id}`)).status).toBe(200);
    const exchange = await postHeadersOnly(url(), `Bearer ${key.api_key}`);
    await waitFor(() => exchange.closed() || exchange.received().includes('\r\n\r\n{'), 'an answer');
    expect(statusOf(exchange)).toBe(401);
    await waitFor(exchange.closed, 'the connection to close');
    const [row] = await bench.rowsOf(key.id, 1);
    expect(row!.status).toBe(401);
    expect(costMicro(row!)).toBe(0);
  });

  it('gives a body a known key is sending a deadline: 408, the connection closed, a row', async () => {
    const key = await bench.newKey();
    const exchange = await postHeadersOnly(url(), `Bearer ${key.api_key}`);
    await waitFor(
      () => exchange.closed() || exchange.received().includes('\r\n\r\n{'),
      'an answer',
      5 * BODY_TIMEOUT_MS,
    );
    expect(statusOf(exchange)).toBe(408);
    expect(JSON.parse(bodyOf(exchange).trim())).toMatchObject({ error: { type: 'invalid_request_error' } });
    await waitFor(exchange.closed, 'the connection to close');
    const [row] = await bench.rowsOf(key.id, 1);
    expect(row!.status).toBe(408);
    expect(costMicro(row!)).toBe(0);
  });

  it("refuses a known key's body of another type without reading it, and closes the connection", async () => {
    const key = await bench.newKey();
    const exchange = await postHeadersOnly(url(), `Bearer ${key.api_key}`, 'application/xml');
    await waitFor(() => exchange.closed() || exchange.received().includes('\r\n\r\n{'), 'an answer');
    expect(statusOf(exchange)).toBe(415);
    await waitFor(exchange.closed, 'the connection to close');
    const [row] = await bench.rowsOf(key.id, 1);
    expect(row!.status).toBe(415);
  });

  it('still serves a known key whose body comes in time, and refuses an unknown one the same way twice', async () => {
    const key = await bench.newKey();
    const post = (apiKey: string) =>
      request(`${url()}/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'hello' }] }),
      });
    const served = await post(key.api_key);
    expect(served.statusCode).toBe(200);
    await served.body.text();
    const unknown = `sk_svc_${'v'.repeat(40)}`;
    const first = await post(unknown);
    const second = await post(unknown);
    expect([first.statusCode, second.statusCode]).toEqual([401, 401]);
    expect(await first.body.text()).toBe(await second.body.text());
    const [row] = await bench.rowsOf(key.id, 1);
    expect(row!.status).toBe(200);
    expect(await bench.settledSpend(key.id, costMicro(row!))).toBe(costMicro(row!));
  });
});
