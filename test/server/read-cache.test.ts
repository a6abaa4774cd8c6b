import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { ReadCache } from '../../server/stores/read-cache.js';

const scratch = mkdtempSync(join(tmpdir(), 'gc-read-cache-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('a read cache', () => {
  const path = join(scratch, 'store.db');
  const db = new BetterSqlite3(path);
  db.pragma('journal_mode = WAL');
  db.exec('CREATE TABLE t (v INTEGER)');
  const other = new BetterSqlite3(path);
  const cache = new ReadCache<number>(db);
  let reads = 0;
  const total = () =>
    cache.get('sum', () => {
      reads++;
      return (db.prepare('SELECT COALESCE(SUM(v), 0) AS s FROM t').get() as { s: number }).s;
    });

  it('answers from memory while nothing changes', () => {
    expect(total()).toBe(0);
    expect(total()).toBe(0);
    expect(reads).toBe(1);
  });

  it('reads again after a change on its own connection', () => {
    db.prepare('INSERT INTO t VALUES (5)').run();
    expect(total()).toBe(5);
    expect(reads).toBe(2);
  });

  it('reads again after a commit on another connection, as another process would make', async () => {
    other.prepare('INSERT INTO t VALUES (7)').run();
    await nextTurn();
    expect(total()).toBe(12);
    expect(total()).toBe(12);
    expect(reads).toBe(3);
  });

  it("reads the other connections' commits once per turn of the event loop, its own changes at once", async () => {
    await nextTurn();
    const before = total();
    other.prepare('INSERT INTO t VALUES (1)').run();
    // Same turn, even across an await: answers are those of the turn's first read.
    expect(total()).toBe(before);
    await null;
    expect(total()).toBe(before);
    db.prepare('INSERT INTO t VALUES (2)').run();
    expect(total()).toBe(before + 3);
    other.prepare('INSERT INTO t VALUES (4)').run();
    expect(total()).toBe(before + 3);
    await nextTurn();
    expect(total()).toBe(before + 7);
  });

  it('starts over past its size limit instead of growing', () => {
    const small = new ReadCache<number>(db, 2);
    let loads = 0;
    for (const key of ['a', 'b', 'c', 'a']) small.get(key, () => ++loads);
    // 'a' was dropped when 'c' arrived.
    expect(loads).toBe(4);
  });
});
