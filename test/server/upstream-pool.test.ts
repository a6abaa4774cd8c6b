import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import pino from 'pino';
import { Agent, request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { closeUpstreams } from '../../server/gateway/upstream-pool.js';

/** An upstream that sends its headers and the start of a body, then nothing more until closed. */
async function stallingUpstream(): Promise<{ server: Server; url: string }> {
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write('data: {}\n\n');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

function capturedLog() {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
      done();
    },
  });
  return { log: pino({ level: 'info' }, sink), lines };
}

let upstream: { server: Server; url: string } | null = null;
afterEach(async () => {
  upstream?.server.closeAllConnections();
  await new Promise((resolve) => upstream?.server.close(resolve));
  upstream = null;
});

/** An agent with one request to a stalling upstream, its answer's headers in. */
async function stalledRequest() {
  upstream = await stallingUpstream();
  const agent = new Agent();
  const response = await request(`${upstream.url}/v1/chat/completions`, {
    method: 'POST',
    body: '{}',
    dispatcher: agent,
  });
  return { agent, response };
}

describe("closing the gateway's upstream connections", () => {
  it('cuts a request nobody reads any more after the grace, naming its upstream, rather than waiting on it', async () => {
    const { agent, response } = await stalledRequest();
    const cut = response.body.text().then(
      () => 'ended',
      (error: Error) => error.name,
    );
    const { log, lines } = capturedLog();
    const started = performance.now();
    await closeUpstreams(agent, log, 300);
    expect(performance.now() - started).toBeGreaterThanOrEqual(290);
    expect(await cut).not.toBe('ended');
    expect(lines).toHaveLength(1);
    expect(lines[0]!.open).toEqual([{ origin: upstream!.url, running: 1, pending: 0 }]);
  });

  it('closes at once, quietly, when every upstream request has ended', async () => {
    const { agent, response } = await stalledRequest();
    response.body.destroy();
    const { log, lines } = capturedLog();
    const started = performance.now();
    await closeUpstreams(agent, log, 10_000);
    expect(performance.now() - started).toBeLessThan(5000);
    expect(lines).toEqual([]);
  });
});
