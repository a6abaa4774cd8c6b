import { EventEmitter } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent, request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { Cancel } from '../../server/gateway/cancel.js';

/** What a promise came to, without waiting for it. */
function settled<T>(promise: Promise<T>): { state: () => 'pending' | 'resolved' | 'rejected'; error: () => unknown } {
  let state: 'pending' | 'resolved' | 'rejected' = 'pending';
  let error: unknown;
  promise.then(
    () => (state = 'resolved'),
    (reason: unknown) => {
      state = 'rejected';
      error = reason;
    },
  );
  return { state: () => state, error: () => error };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('Cancel', () => {
  it('is aborted once: the first reason stays, and its listeners hear it once', () => {
    const cancel = new Cancel();
    let heard = 0;
    cancel.on('abort', () => heard++);
    cancel.abort(new Error('guillotine'));
    cancel.abort(new Error('client disconnected'));
    expect(cancel.aborted).toBe(true);
    expect((cancel.reason as Error).message).toBe('guillotine');
    expect(heard).toBe(1);
  });

  it('sleeps, or stops sleeping with its reason as soon as it is aborted, leaving no listener behind', async () => {
    const slept = new Cancel();
    await slept.sleep(5);
    expect(slept.listenerCount('abort')).toBe(0);

    const cancel = new Cancel();
    const sleeping = settled(cancel.sleep(60_000));
    await tick();
    expect(sleeping.state()).toBe('pending');
    const reason = new Error('client disconnected');
    cancel.abort(reason);
    await tick();
    expect(sleeping.state()).toBe('rejected');
    expect(sleeping.error()).toBe(reason);
    expect(cancel.listenerCount('abort')).toBe(0);
    await expect(cancel.sleep(1)).rejects.toBe(reason);
  });

  it("waits for an emitter's event, its error, or the abort, whichever comes first, and stops listening to all three", async () => {
    const cancel = new Cancel();
    const emitter = new EventEmitter();
    const listeners = () => [
      emitter.listenerCount('drain'),
      emitter.listenerCount('error'),
      cancel.listenerCount('abort'),
    ];

    const drained = cancel.until(emitter, 'drain');
    expect(listeners()).toEqual([1, 1, 1]);
    emitter.emit('drain');
    await drained;
    expect(listeners()).toEqual([0, 0, 0]);

    const failing = settled(cancel.until(emitter, 'drain'));
    const failure = new Error('socket gone');
    emitter.emit('error', failure);
    await tick();
    expect([failing.state(), failing.error()]).toEqual(['rejected', failure]);
    expect(listeners()).toEqual([0, 0, 0]);

    const waiting = settled(cancel.until(emitter, 'drain'));
    const reason = new Error('attempt over');
    cancel.abort(reason);
    await tick();
    expect([waiting.state(), waiting.error()]).toEqual(['rejected', reason]);
    expect(listeners()).toEqual([0, 0, 0]);
  });

  describe('as an undici request signal', () => {
    let server: Server | null = null;
    afterEach(async () => {
      server?.closeAllConnections();
      await new Promise((resolve) => server?.close(resolve));
      server = null;
    });

    it('ends a request under way, its reason the error it ends with, and the upstream sees its connection go', async () => {
      let upstreamClosed!: () => void;
      const closed = new Promise<void>((resolve) => (upstreamClosed = resolve));
      // Headers and a first event, then nothing: a stream the gateway gives up on.
      server = createServer((req, res) => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write('data: {}\n\n');
        req.socket.once('close', upstreamClosed);
      });
      await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
      const agent = new Agent();
      try {
        const cancel = new Cancel();
        const answer = await request(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`, {
          dispatcher: agent,
          signal: cancel,
        });
        const body = answer.body[Symbol.asyncIterator]();
        await body.next();
        const reading = settled(body.next());
        const reason = new Error('attempt over');
        cancel.abort(reason);
        await closed;
        await tick();
        expect([reading.state(), reading.error()]).toEqual(['rejected', reason]);
      } finally {
        await agent.close();
      }
    });

    it('is not sent at all once aborted', async () => {
      let asked = 0;
      server = createServer((_req, res) => {
        asked++;
        res.end('{}');
      });
      await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
      const agent = new Agent();
      try {
        const cancel = new Cancel();
        const reason = new Error('client disconnected');
        cancel.abort(reason);
        await expect(
          request(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`, { dispatcher: agent, signal: cancel }),
        ).rejects.toBe(reason);
        expect(asked).toBe(0);
      } finally {
        await agent.close();
      }
    });
  });
});
