import { Writable } from 'node:stream';
import Fastify, { LogController, type FastifyBaseLogger } from 'fastify';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createLogger, lazyChildLogger } from '../../server/log.js';
import { errorsPlugin } from '../../server/plugins/errors.js';

function capture() {
  const lines: Record<string, unknown>[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n')) if (line) lines.push(JSON.parse(line));
      done();
    },
  });
  return { lines, destination };
}

describe('request loggers made on first use', () => {
  const { lines, destination } = capture();
  const logger = createLogger('info', destination) as FastifyBaseLogger;
  // As the server builds its app: its own lines only, errors logged by the errors plugin.
  const app = Fastify({
    loggerInstance: logger,
    childLoggerFactory: lazyChildLogger,
    logController: new LogController({ disableRequestLogging: true }),
  });
  void app.register(errorsPlugin);
  app.get('/quiet', async () => ({ ok: true }));
  app.get('/chatty', async (request) => {
    request.log.info({ body: { password: 'pw-secret' }, step: 1 }, 'chatty step');
    request.log.debug('below the level');
    request.log.child({ part: 'inner' }).warn('inner step');
    return { level: request.log.level };
  });
  app.get('/broken', async () => {
    throw new Error('boom');
  });
  afterEach(() => {
    lines.length = 0;
    vi.restoreAllMocks();
  });

  it('are not made for a request that logs nothing', async () => {
    const child = vi.spyOn(logger, 'child');
    expect((await app.inject('/quiet')).statusCode).toBe(200);
    expect(child).not.toHaveBeenCalled();
    expect(lines).toEqual([]);
  });

  it("write the request's id, redact secrets, keep the level and make children", async () => {
    const answer = await app.inject('/chatty');
    expect(answer.json()).toEqual({ level: 'info' });
    const requestId = expect.stringMatching(/^req-/);
    expect(lines).toEqual([
      expect.objectContaining({ msg: 'chatty step', reqId: requestId, step: 1, body: { password: '[redacted]' } }),
      expect.objectContaining({ msg: 'inner step', reqId: lines[0]?.reqId, part: 'inner', level: 40 }),
    ]);
  });

  it("carry the request's id into the line of an unexpected error", async () => {
    expect((await app.inject('/broken')).statusCode).toBe(500);
    expect(lines).toEqual([
      expect.objectContaining({
        msg: 'request failed',
        reqId: expect.stringMatching(/^req-/),
        level: 50,
        err: expect.anything(),
      }),
    ]);
  });
});
