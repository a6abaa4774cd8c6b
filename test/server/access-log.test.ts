import { Writable } from 'node:stream';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { AccessLog, type AccessEntry } from '../../server/access-log.js';
import { createLogger } from '../../server/log.js';

function capture() {
  const writes: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      writes.push(chunk.toString('utf8'));
      done();
    },
  });
  return { writes, destination };
}

const entry = (reqId: string, url = '/api/keys'): AccessEntry => ({ reqId, method: 'GET', url, status: 200, ms: 3 });

describe('the access log', () => {
  afterEach(() => vi.restoreAllMocks());

  it('writes the line pino writes for the same entry, URLs escaped as JSON', async () => {
    const { writes, destination } = capture();
    const logger = createLogger('info', destination);
    const access = new AccessLog(logger, destination);
    vi.spyOn(Date, 'now').mockReturnValue(1_795_000_000_000);
    const odd = entry('req-1', '/api/keys?q="quoted"\\back\u0001é☃');
    logger.info(odd, 'request completed');
    access.record(odd);
    await nextTurn();
    expect(writes).toHaveLength(2);
    expect(writes[1]).toBe(writes[0]);
    expect(JSON.parse(writes[1]!)).toMatchObject({ url: odd.url, pid: process.pid, time: 1_795_000_000_000 });
  });

  it("writes a turn's lines together once the turn is over, each with the time it was recorded", async () => {
    const { writes, destination } = capture();
    const access = new AccessLog(createLogger('info', destination), destination);
    const now = vi.spyOn(Date, 'now');
    for (const [i, at] of [1000, 2000, 3000].entries()) {
      now.mockReturnValue(at);
      access.record(entry(`req-${i}`));
    }
    expect(writes).toEqual([]);
    await nextTurn();
    expect(writes).toHaveLength(1);
    const lines = writes[0]!
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines.map((line) => [line.reqId, line.time])).toEqual([
      ['req-0', 1000],
      ['req-1', 2000],
      ['req-2', 3000],
    ]);
    access.record(entry('req-3'));
    await nextTurn();
    expect(writes).toHaveLength(2);
  });

  it('writes what is pending when flushed (the server closing) and nothing twice', async () => {
    const { writes, destination } = capture();
    const access = new AccessLog(createLogger('info', destination), destination);
    access.record(entry('req-1'));
    access.flush();
    expect(writes).toHaveLength(1);
    await nextTurn();
    access.flush();
    expect(writes).toHaveLength(1);
  });

  it('writes nothing when the log level is above info', async () => {
    const { writes, destination } = capture();
    const access = new AccessLog(createLogger('warn', destination), destination);
    access.record(entry('req-1'));
    await nextTurn();
    access.flush();
    expect(writes).toEqual([]);
  });
});
