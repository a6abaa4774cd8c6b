import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openLoopCase } from '../../bench/open-loop.js';

describe("the bench's open loop", () => {
  let server: Server;
  let url: string;
  /** performance.now() at each request's arrival, by the body it carried. */
  const arrivals = new Map<string, number[]>();

  beforeAll(async () => {
    server = createServer((req, res) => {
      let body = '';
      req.setEncoding('utf8').on('data', (part: string) => (body += part));
      req.on('end', () => {
        arrivals.set(body, [...(arrivals.get(body) ?? []), performance.now()]);
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('times interleaved targets in one schedule, so that each sees the same moments', async () => {
    const member = (name: string) => ({ name, url, authorization: 'Bearer test', bodies: [name] });
    const runs = await openLoopCase(
      {
        targets: [{ name: 'routes', members: [member('a'), member('b'), member('c')] }],
        bodies: ['unused'],
        rps: 300,
        seconds: 0.2,
        until: 'end',
        warmSeconds: 0.05,
        rounds: 1,
      },
      () => undefined,
    );
    // Each member as many timed requests as a target of its own would get: 0.2 s at 300 req/s.
    for (const name of ['a', 'b', 'c']) {
      expect(runs[name]).toMatchObject({ sent: 60, ok: 60, failed: 0 });
      expect(runs[name]!.samples).toHaveLength(60);
    }
    // Taking turns: each member's requests span the others' (run one after the other, a's would
    // all have come before b's, and b's before c's).
    const spans = ['a', 'b', 'c'].map((name) => [Math.min(...arrivals.get(name)!), Math.max(...arrivals.get(name)!)]);
    for (const [from, to] of spans) {
      for (const [otherFrom, otherTo] of spans) {
        expect(from).toBeLessThan(otherTo!);
        expect(otherFrom).toBeLessThan(to!);
      }
    }
  });
});
