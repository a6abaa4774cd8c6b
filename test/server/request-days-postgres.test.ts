import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type pg from 'pg';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { POSTGRES } from '../../server/analytics/postgres-sql.js';
import { retentionHorizon } from '../../server/domain/retention.js';
import { recordRequests, RepeatedRequest } from '../../server/ingest/record-requests.js';
import { RetentionSweeper } from '../../server/retention/sweeper.js';
import { SqliteControlStore } from '../../server/stores/control/store.js';
import { migratePostgres, openPool } from '../../server/stores/postgres.js';
import { dayOf, DAY_MS, markDroppingSql } from '../../server/stores/telemetry/postgres/request-days.js';
import { PgRequestLog } from '../../server/stores/telemetry/postgres/request-log.js';
import { REQUEST_ROW_COLUMNS } from '../../server/stores/telemetry/postgres/request-sql.js';
import { REQUEST_COLUMNS, type RequestRecord } from '../../server/stores/telemetry/request-record.js';
import { freshDatabase } from '../postgres/database.js';
import { NOW, retentionRows, START } from './retention-rows.js';

/**
 * The request log on PostgreSQL in day tables (migrations-postgres/007, request-days.ts): each
 * row in its UTC day's table, ids unique across them, whole days dropped by retention once every
 * organisation with rows there is past its horizon, a drop stopped half-way finished, and an
 * existing log moved into day tables by the migration.
 */

vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

const MIGRATIONS = new URL('../../server/stores/telemetry/migrations-postgres/', import.meta.url);
const A = 'org-a';
const B = 'org-b';
/** Each organisation's rows over the four days before NOW (five UTC days). */
const ROWS: RequestRecord[] = [A, B].flatMap((orgId, n) =>
  retentionRows(1_200, { seed: 90 + n, prefix: `${orgId}-`, from: START, to: NOW }).map((row) => ({
    ...row,
    org_id: orgId,
  })),
);
const DAYS = [...new Set(ROWS.map((row) => dayOf(row.ts)))].sort((a, b) => a - b);
const nameOf = (day: number) => `requests_${new Date(day * DAY_MS).toISOString().slice(0, 10).replaceAll('-', '')}`;

describe('the request log in day tables on PostgreSQL', () => {
  const folder = mkdtempSync(join(tmpdir(), 'gc-request-days-'));
  let control: SqliteControlStore;
  let database: Awaited<ReturnType<typeof freshDatabase>>;
  let pool: pg.Pool;
  let log: PgRequestLog;

  beforeAll(async () => {
    control = SqliteControlStore.open(join(folder, 'control.db'), { accessSeconds: 900, refreshSeconds: 3600 });
    database = await freshDatabase();
    pool = openPool(database.url);
    log = await PgRequestLog.open(database.url);
  });
  afterAll(async () => {
    await log?.close();
    await pool?.end();
    await database?.drop();
    await control?.close();
    rmSync(folder, { recursive: true, force: true });
  });

  /** Each day table's rows, by its name. */
  const dayCounts = async () => {
    const tables = await pool.query<{ name: string }>(
      `SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
        WHERE i.inhparent = 'requests'::regclass`,
    );
    const counts: Record<string, number> = {};
    for (const { name } of tables.rows) {
      counts[name] = (await pool.query<{ n: number }>(`SELECT COUNT(*)::int AS n FROM ${name}`)).rows[0]!.n;
    }
    return counts;
  };
  const ids = async () =>
    (await pool.query<{ req_id: string }>('SELECT req_id FROM request_ids ORDER BY req_id')).rows.map((r) => r.req_id);
  const storedIds = async () =>
    (await pool.query<{ req_id: string }>('SELECT req_id FROM requests ORDER BY req_id')).rows.map((r) => r.req_id);
  const sorted = (rows: readonly RequestRecord[]) => rows.map((row) => row.req_id).sort();

  it('keeps each row in its UTC day, every id once across the days, refused again on another day', async () => {
    await recordRequests(control, log, ROWS.slice(0, 1_000));
    await recordRequests(control, log, ROWS.slice(1_000));
    const counts = await dayCounts();
    // Tomorrow's table is made ahead, empty.
    for (const day of DAYS) {
      expect(counts[nameOf(day)], nameOf(day)).toBe(ROWS.filter((row) => dayOf(row.ts) === day).length);
    }
    const inDays = await pool.query<{ strays: number }>(
      `SELECT COUNT(*)::int AS strays FROM requests r JOIN pg_class c ON c.oid = r.tableoid
        WHERE c.relname <> 'requests_' || to_char(to_timestamp(r.ts / 1000.0) AT TIME ZONE 'UTC', 'YYYYMMDD')`,
    );
    expect(inDays.rows[0]!.strays).toBe(0);
    expect(await ids()).toEqual(sorted(ROWS));

    // The first row's id again, a day later: refused, as an id stored in the same day would be.
    const again = { ...ROWS[0]!, ts: ROWS[0]!.ts + DAY_MS };
    const refused = await recordRequests(control, log, [again]).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(RepeatedRequest);
    expect(await recordRequests(control, log, [again], { skipStored: true, report: () => undefined })).toBe(0);
    expect(await storedIds()).toEqual(sorted(ROWS));
  });

  it('finds one request by its id through its day', async () => {
    const row = ROWS[1_500]!;
    // As the analytics ask for it (queries.ts, one request).
    const condition = POSTGRES.requestIs('reqId').replaceAll('@reqId', '$1');
    const found = await pool.query(`SELECT ${REQUEST_COLUMNS.join(', ')} FROM requests WHERE ${condition}`, [
      row.req_id,
    ]);
    expect(found.rows).toEqual([row]);
    const plan = await pool.query<{ 'QUERY PLAN': string }>(
      `EXPLAIN (ANALYZE, COSTS OFF) SELECT * FROM requests WHERE ${condition}`,
      [row.req_id],
    );
    // Run-time pruning: every day table but the row's is skipped.
    const lines = plan.rows.map((line) => line['QUERY PLAN']);
    const scans = lines.filter((line) => / on requests_\d{8}/.test(line));
    expect(scans.length).toBeGreaterThan(3);
    expect(scans.filter((line) => !line.includes('(never executed)'))).toHaveLength(1);
  });

  it('drops a day whose organisations are all past their horizons, and no other', async () => {
    const [first, second] = DAYS;
    const end = (day: number) => (day + 1) * DAY_MS;
    // B keeps the second day: only the first goes.
    const horizons = new Map([
      [A, end(second!)],
      [B, end(first!)],
    ]);
    expect(await log.dropDays(horizons)).toEqual({
      days: 1,
      rows: ROWS.filter((row) => dayOf(row.ts) === first).length,
    });
    const counts = await dayCounts();
    expect(counts[nameOf(first!)]).toBeUndefined();
    expect(counts[nameOf(second!)]).toBe(ROWS.filter((row) => dayOf(row.ts) === second).length);
    const kept = ROWS.filter((row) => dayOf(row.ts) !== first);
    expect(await storedIds()).toEqual(sorted(kept));
    expect(await ids()).toEqual(sorted(kept));
    const recorded = await pool.query('SELECT org_id, horizon FROM retention_horizons ORDER BY org_id');
    expect(recorded.rows).toEqual([
      { org_id: A, horizon: end(second!) },
      { org_id: B, horizon: end(first!) },
    ]);

    // An organisation without a horizon keeps its days.
    expect(await log.dropDays(new Map([[A, end(second!)]]))).toEqual({ days: 0, rows: 0 });
    expect(await storedIds()).toEqual(sorted(kept));
  });

  it('makes a dropped day again for a row written by a server that knew it', async () => {
    const other = await PgRequestLog.open(database.url);
    try {
      const last = DAYS.at(-1)!;
      const late = ROWS.filter((row) => dayOf(row.ts) === last);
      // `other` knows the last day's table: it writes there.
      const first = { ...late[0]!, req_id: 'late-1' };
      expect(await recordRequests(control, other, [first])).toBe(1);
      // Dropped by this server (both organisations past it, A's row included).
      const past = new Map([
        [A, (last + 1) * DAY_MS],
        [B, (last + 1) * DAY_MS],
      ]);
      expect((await log.dropDays(past)).days).toBeGreaterThanOrEqual(2);
      expect((await dayCounts())[nameOf(last)]).toBeUndefined();
      // `other` still believes in it: its write finds it gone, makes it again and writes.
      const second = { ...late[1]!, req_id: 'late-2' };
      expect(await recordRequests(control, other, [second])).toBe(1);
      expect((await dayCounts())[nameOf(last)]).toBe(1);
      expect(await storedIds()).toEqual(['late-2']);
      expect(await ids()).toEqual(['late-2']);
    } finally {
      await other.close();
    }
  });

  it('finishes a drop stopped during its detach, and makes anew a day table left detached', async () => {
    const day = dayOf(NOW) - 10;
    const rows = [0, 1, 2].map((n) => ({ ...ROWS[n]!, req_id: `stopped-${n}`, ts: day * DAY_MS + n * 1_000 }));
    await recordRequests(control, log, rows);
    // A reader holds the day while its detach waits for it; the detach is cancelled there, as a
    // server stopped in the middle of a drop leaves it: pending.
    const reader = await pool.connect();
    const detacher = await pool.connect();
    try {
      await reader.query('BEGIN');
      await reader.query(`SELECT COUNT(*) FROM ${nameOf(day)}`);
      const pid = (await detacher.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
      const detaching = detacher
        .query(`ALTER TABLE requests DETACH PARTITION ${nameOf(day)} CONCURRENTLY`)
        .catch((error: Error) => error);
      await vi.waitFor(
        async () => {
          const waits = await pool.query('SELECT 1 FROM pg_inherits WHERE inhdetachpending');
          expect(waits.rowCount).toBe(1);
        },
        { timeout: 10_000 },
      );
      await pool.query('SELECT pg_cancel_backend($1)', [pid]);
      expect(await detaching).toBeInstanceOf(Error);
      await reader.query('COMMIT');
    } finally {
      reader.release();
      detacher.release();
    }
    // Any horizon: a pending detach is finished whatever the days asked for.
    expect(await log.dropDays(new Map([[A, 0]]))).toEqual({ days: 1, rows: 3 });
    expect((await pool.query('SELECT 1 FROM pg_inherits WHERE inhdetachpending')).rowCount).toBe(0);
    expect((await pool.query('SELECT to_regclass($1) AS found', [nameOf(day)])).rows[0].found).toBeNull();
    expect((await ids()).filter((id) => id.startsWith('stopped-'))).toEqual([]);

    // Detached and not dropped (stopped between the two): the leftover goes when its day is written again.
    await recordRequests(control, log, rows);
    await pool.query(`ALTER TABLE requests DETACH PARTITION ${nameOf(day)}`);
    await pool.query(`DELETE FROM request_ids WHERE req_id LIKE 'stopped-%'`);
    const other = await PgRequestLog.open(database.url);
    try {
      expect(await recordRequests(control, other, [{ ...rows[0]!, req_id: 'anew' }])).toBe(1);
      const left = await pool.query<{ req_id: string }>(`SELECT req_id FROM ${nameOf(day)}`);
      expect(left.rows).toEqual([{ req_id: 'anew' }]);
    } finally {
      await other.close();
    }
  });

  /** An empty table of `day`, as a write makes it before its rows. */
  const makeDay = (day: number) => pool.query('SELECT request_day_partition($1)', [day]);
  const at = (day: number, n: number, orgId = A) => ({
    ...ROWS[n]!,
    org_id: orgId,
    req_id: `at-${day}-${n}`,
    ts: day * DAY_MS + n,
  });
  /** Both organisations past the end of `day`. */
  const pastBoth = (day: number) =>
    new Map([
      [A, (day + 1) * DAY_MS],
      [B, (day + 1) * DAY_MS],
    ]);

  it('lands a write into days dropped and being detached in their tables made again, once the drop is over', async () => {
    const [x, y] = [dayOf(NOW) - 20, dayOf(NOW) - 19];
    await Promise.all([makeDay(x), makeDay(y)]);
    const other = await PgRequestLog.open(database.url);
    // A reader of the second day holds its detach: the first is gone, the second on its way.
    const reader = await pool.connect();
    try {
      await reader.query('BEGIN');
      await reader.query(`SELECT COUNT(*) FROM ${nameOf(y)}`);
      const dropping = log.dropDays(pastBoth(y));
      await vi.waitFor(
        async () => expect((await pool.query('SELECT 1 FROM pg_inherits WHERE inhdetachpending')).rowCount).toBe(1),
        { timeout: 10_000 },
      );
      // Not counted: the detach waiting for the reader holds the second day's reads.
      expect((await pool.query('SELECT to_regclass($1) AS found', [nameOf(x)])).rows[0].found).toBeNull();
      // Its first day's table is made again once the detach is over (an attach waits for it), and
      // its second's, gone by then, after.
      const writing = recordRequests(control, other, [at(x, 1), at(y, 2)]);
      await new Promise((resolve) => setTimeout(resolve, 300));
      await reader.query('COMMIT');
      expect(await dropping).toEqual({ days: 2, rows: 0 });
      expect(await writing).toBe(2);
    } finally {
      reader.release();
      await other.close();
    }
    const counts = await dayCounts();
    expect([counts[nameOf(x)], counts[nameOf(y)]]).toEqual([1, 1]);
    expect((await ids()).filter((id) => id.startsWith('at-'))).toEqual([`at-${x}-1`, `at-${y}-2`]);
  });

  it('keeps a day whose write was in flight while its drop was decided, and finishes a drop stopped after its mark', async () => {
    const z = dayOf(NOW) - 25;
    await makeDay(z);
    // A write of an organisation without a horizon, not yet committed, into a day with no other row.
    const writer = await pool.connect();
    const kept = at(z, 3, 'org-c');
    try {
      await writer.query('BEGIN');
      await writer.query({
        text: `INSERT INTO requests (${REQUEST_ROW_COLUMNS.join(', ')}) SELECT ${REQUEST_ROW_COLUMNS.map((column) =>
          column === 'ts' ? '$1::int8' : column === 'org_id' ? '$2' : column === 'req_id' ? '$3' : column,
        ).join(', ')} FROM requests WHERE req_id = 'anew'`,
        values: [kept.ts, kept.org_id, kept.req_id],
      });
      const dropping = log.dropDays(pastBoth(z));
      await new Promise((resolve) => setTimeout(resolve, 300));
      await writer.query('COMMIT');
      // Left to the next sweep, which sees the row: the day stays.
      expect(await dropping).toEqual({ days: 0, rows: 0 });
      expect(await log.dropDays(pastBoth(z))).toEqual({ days: 0, rows: 0 });
    } finally {
      writer.release();
    }
    expect((await pool.query(`SELECT req_id FROM ${nameOf(z)}`)).rows).toEqual([{ req_id: kept.req_id }]);

    // Marked, and stopped there: a write into the day waits; the next drop, with no horizon at all, finishes it.
    const w = dayOf(NOW) - 30;
    await makeDay(w);
    await pool.query(markDroppingSql(nameOf(w)));
    const writing = recordRequests(control, log, [at(w, 4)]);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await log.dropDays(new Map())).toEqual({ days: 1, rows: 0 });
    expect(await writing).toBe(1);
    expect((await dayCounts())[nameOf(w)]).toBe(1);
  });

  it('is swept by the retention sweeper: whole days first, then the rows of days other organisations keep', async () => {
    await pool.query('TRUNCATE requests, request_ids, retention_horizons');
    await recordRequests(control, log, ROWS);
    const logged: string[] = [];
    const sweeper = new RetentionSweeper({
      platformDays: null,
      // A keeps two days, B three: days before B's horizon go whole, A's rows of the day between one by one.
      retentions: async () => [
        { orgId: A, days: 2 },
        { orgId: B, days: 3 },
      ],
      organizations: async () => [A, B],
      expire: async (orgId, before, limit) => {
        const rows = await log.expire(orgId, before, limit);
        return { rows, terms: 0, ms: 0, more: rows === limit };
      },
      dropDays: (horizons) => log.dropDays(horizons),
      now: () => NOW,
      log: pino({ level: 'info' }, { write: (line: string) => void logged.push(line) }),
      pauseMs: 0,
    });
    await sweeper.sweep();
    await sweeper.close();
    const [horizonA, horizonB] = [retentionHorizon(2, NOW)!, retentionHorizon(3, NOW)!];
    const kept = ROWS.filter((row) => row.ts >= (row.org_id === A ? horizonA : horizonB));
    expect(await storedIds()).toEqual(sorted(kept));
    expect(await ids()).toEqual(sorted(kept));
    const whole = DAYS.filter((day) => (day + 1) * DAY_MS <= horizonB);
    expect(whole.length).toBeGreaterThan(0);
    const counts = await dayCounts();
    for (const day of whole) expect(counts[nameOf(day)]).toBeUndefined();
    expect(logged.some((line) => line.includes('whole days of old request rows dropped'))).toBe(true);
  });

  it('moves an existing log into day tables, saying how long it holds it, every row and id kept', async () => {
    const older = await freshDatabase();
    const earlier = join(folder, 'migrations-to-6');
    mkdirSync(earlier);
    for (const file of readdirSync(fileURLToPath(MIGRATIONS)).filter((name) => name < '007')) {
      copyFileSync(fileURLToPath(new URL(file, MIGRATIONS)), join(earlier, file));
    }
    const olderPool = openPool(older.url);
    try {
      await migratePostgres(olderPool, 'telemetry', pathToFileURL(`${earlier}/`));
      // The rows as the log stored them, search columns included, copied over.
      const stored = await pool.query(`SELECT ${REQUEST_ROW_COLUMNS.join(', ')} FROM requests ORDER BY req_id`);
      const values = REQUEST_ROW_COLUMNS.map((column) => stored.rows.map((row) => row[column]));
      const types = await pool.query<{ column_name: string; udt_name: string }>(
        "SELECT column_name, udt_name FROM information_schema.columns WHERE table_name = 'requests'",
      );
      const typeOf = new Map(types.rows.map((row) => [row.column_name, row.udt_name]));
      await olderPool.query(
        `INSERT INTO requests (${REQUEST_ROW_COLUMNS.join(', ')}) SELECT * FROM unnest(${REQUEST_ROW_COLUMNS.map(
          (column, i) => `$${i + 1}::${typeOf.get(column)}[]`,
        ).join(', ')})`,
        values,
      );
      const said: { details: object; message: string }[] = [];
      const upgraded = await PgRequestLog.open(older.url, {
        log: { info: (details, message) => said.push({ details, message }) },
      });
      await upgraded.close();
      expect(said.map((line) => line.details)).toEqual([
        { rows: stored.rowCount, expectedSeconds: expect.any(Number) },
        { rows: stored.rowCount, seconds: expect.any(Number) },
      ]);
      expect(said[0]!.message).toMatch(/reads and writes wait/);
      const moved = await olderPool.query(`SELECT ${REQUEST_ROW_COLUMNS.join(', ')} FROM requests ORDER BY req_id`);
      expect(moved.rows).toEqual(stored.rows);
      const movedIds = await olderPool.query('SELECT req_id, ts FROM request_ids ORDER BY req_id');
      expect(movedIds.rows).toEqual(stored.rows.map((row) => ({ req_id: row.req_id, ts: row.ts })));
      const tables = await olderPool.query<{ n: number }>(
        "SELECT COUNT(*)::int AS n FROM pg_inherits WHERE inhparent = 'requests'::regclass",
      );
      expect(tables.rows[0]!.n).toBe(new Set(stored.rows.map((row) => dayOf(row.ts as number))).size);
      const indexes = await olderPool.query("SELECT indexname FROM pg_indexes WHERE tablename = 'requests' ORDER BY 1");
      expect(indexes.rows.map((row) => row.indexname)).toEqual([
        'requests_by_cost',
        'requests_by_key',
        'requests_by_org',
        'requests_by_search_set',
        'requests_search_rare',
      ]);
    } finally {
      await olderPool.end();
      await older.drop();
    }
  });
});
