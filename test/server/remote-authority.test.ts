import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { RemoteAuthority } from '../../server/gateway/remote-authority.js';
import type { RequestRecord } from '../../server/stores/telemetry/request-record.js';
import { requestRecord } from './request-rows.js';

/** A control plane's /requests that answers each call as `answers` says, in turn, and keeps what it received. */
async function fakeControlPlane(answers: ((ids: string[]) => { status: number; body: unknown })[]) {
  const received: string[][] = [];
  const server: Server = createServer((request, response) => {
    let text = '';
    request.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
    request.on('end', () => {
      const ids = (JSON.parse(text) as { rows: { req_id: string }[] }).rows.map((row) => row.req_id);
      received.push(ids);
      const answer = (answers[received.length - 1] ?? answers.at(-1)!)(ids);
      response.writeHead(answer.status, { 'content-type': 'application/json' });
      response.end(JSON.stringify(answer.body));
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return { server, received, url: new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}`) };
}

// Its owners are dropped on the way: the control plane files a row under its key's.
const row = (n: number): RequestRecord => ({
  ...requestRecord(n),
  org_id: 'org',
  project_id: 'project',
  key_id: 'key',
});

const servers: Server[] = [];
afterEach(() => {
  for (const server of servers.splice(0)) server.close();
});

async function until(check: () => boolean): Promise<void> {
  for (let waited = 0; !check(); waited += 10) {
    if (waited > 5000) throw new Error('timed out');
    await new Promise((done) => setTimeout(done, 10));
  }
}

describe("a remote gateway's rows on their way to the control plane", () => {
  it('sends again what a failing control plane did not take, and drops only the rows it refuses as such', async () => {
    const stored = (ids: string[]) => ({ status: 200, body: { stored: ids.length } });
    const plane = await fakeControlPlane([
      () => ({ status: 503, body: { error: 'busy' } }),
      () => ({
        status: 422,
        body: { detail: [{ loc: ['body', 'rows', 1, 'prompt_tokens'], msg: 'must be >= 0', type: 'minimum' }] },
      }),
      stored,
    ]);
    servers.push(plane.server);
    const authority = new RemoteAuthority({
      controlPlane: plane.url,
      token: 'x'.repeat(32),
      logger: pino({ level: 'silent' }),
      flushMs: 20,
    });
    for (const n of [1, 2, 3]) authority.report(row(n));
    await until(() => plane.received.length >= 3);
    const [first, second, third] = plane.received;
    expect(second).toEqual(first);
    // The row the 422 named is gone; the others are sent again, and then nothing more.
    expect(third).toEqual([first![0], first![2]]);
    await authority.close();
    expect(plane.received).toHaveLength(3);
  });
});
