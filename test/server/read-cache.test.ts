import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { ReadCache } from '../../server/stores/read-cache.js';

const scratch = mkdtempSync(join(tmpdir(), 'gc-read-cache-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

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

  it('reads again after a commit on another connection, as another process would make', () => {
    other.prepare('INSERT INTO t VALUES (7)').run();
    expect(total()).toBe(12);
    expect(total()).toBe(12);
    expect(reads).toBe(3);
  });

  it("reads the other connections' commits once per synchronous run, its own changes at once", async () => {
    const before = total();
    other.prepare('INSERT INTO t VALUES (1)').run();
    // Same run: answers are those of the run's start, as if it ran at that instant.
    expect(total()).toBe(before);
    db.prepare('INSERT INTO t VALUES (2)').run();
    expect(total()).toBe(before + 3);
    other.prepare('INSERT INTO t VALUES (4)').run();
    await null;
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
