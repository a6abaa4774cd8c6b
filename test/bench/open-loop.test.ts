import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { timing } from '../../bench/gateway.js';
import { openLoopCase, type Run } from '../../bench/open-loop.js';

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
      expect(runs[name]).toMatchObject({ sent: 60, ok: 60, failed: 0, roundEnds: [60] });
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

  it('times a pair in one schedule with each member at the rate, in the time of one target', async () => {
    const member = (name: string) => ({ name, url, authorization: 'Bearer test', bodies: [name] });
    const runs = await openLoopCase(
      {
        targets: [{ name: 'pair', members: [member('p'), member('q')], eachAtRate: true }],
        bodies: ['unused'],
        rps: 300,
        seconds: 0.5,
        until: 'end',
        warmSeconds: 0.05,
        rounds: 1,
      },
      () => undefined,
    );
    // Each member 0.5 s at 300 req/s, as a target of its own would get.
    for (const name of ['p', 'q'])
      expect(runs[name]).toMatchObject({ sent: 150, ok: 150, failed: 0, roundEnds: [150] });
    // Sent over 0.5 s, not the 1 s that two members sharing the rate take; and taking turns.
    const timed = ['p', 'q'].map((name) => arrivals.get(name)!.slice(-150));
    for (const times of timed) expect(times[times.length - 1]! - times[0]!).toBeLessThan(900);
    const [p, q] = timed as [number[], number[]];
    expect(p[0]!).toBeLessThan(q[q.length - 1]!);
    expect(q[0]!).toBeLessThan(p[p.length - 1]!);
  });

  it('marks where each round of each target ends, rounds of targets in turn', async () => {
    const target = (name: string) => ({ name, url, authorization: 'Bearer test', bodies: [name] });
    const runs = await openLoopCase(
      {
        targets: [target('x'), target('y')],
        bodies: ['unused'],
        rps: 300,
        seconds: 0.2,
        until: 'end',
        warmSeconds: 0.05,
        rounds: 2,
      },
      () => undefined,
    );
    // 0.1 s a round at 300 req/s: 30 timed requests a round, each target's rounds after one another.
    for (const name of ['x', 'y']) expect(runs[name]).toMatchObject({ sent: 60, ok: 60, roundEnds: [30, 60] });
  });
});

describe("an open-loop target's timing", () => {
  it("gives each round's p99 beside the pooled one, so that one round's stalls show as that round's", () => {
    // Two rounds of 200 answers in 1 ms; in the second, 10 held up 50 ms (a stall of the machine).
    const calm = Array.from({ length: 200 }, () => 1);
    const stalled = Array.from({ length: 200 }, (_, i) => (i < 10 ? 50 : 1));
    const run: Run = {
      samples: [...calm, ...stalled],
      roundEnds: [200, 400],
      sent: 400,
      ok: 400,
      failed: 0,
      maxSendLagMs: 0,
    };
    expect(timing(run)).toMatchObject({ p50: 1, p99: 50, roundP99s: [1, 50] });
  });

  it('says a round with no answer has no p99 (null), not 0', () => {
    const run: Run = { samples: [2, 3], roundEnds: [2, 2], sent: 4, ok: 2, failed: 2, maxSendLagMs: 0 };
    expect(timing(run).roundP99s).toEqual([3, null]);
  });
});
