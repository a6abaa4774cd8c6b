import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import fc from 'fast-check';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { issueKey } from '../../server/domain/keys.js';
import { signUp } from '../../server/domain/sign-up.js';
import { migrateRequestLog } from '../../server/admin/migrate-request-log.js';
import { storedRowsSource } from '../../server/admin/stored-rows.js';
import { PgSql } from '../../server/analytics/postgres-sql.js';
import { AnalyticsQueries } from '../../server/analytics/queries.js';
import {
  ImportSourceError,
  recordRequests,
  recordRequestsFrom,
  RepeatedRequest,
  type ImportEvent,
} from '../../server/ingest/record-requests.js';
import { PgControlStore } from '../../server/stores/control/postgres/store.js';
import { SqliteControlStore } from '../../server/stores/control/store.js';
import { migratePostgres, openPool } from '../../server/stores/postgres.js';
import { addBin, encode, mergeEncoded, type Bins } from '../../server/stores/telemetry/latency-sketch.js';
import { PgRequestLog } from '../../server/stores/telemetry/postgres/request-log.js';
import { RequestColumnsBuilder, requestArrays, requestCopyLines } from '../../server/ingest/request-columns.js';
import { REQUEST_COLUMNS, type RequestRecord } from '../../server/stores/telemetry/request-record.js';
import { ROLLUP_TABLES, type RollupRow } from '../../server/stores/telemetry/rollup-writer.js';
import { searchTexts } from '../../server/stores/telemetry/search-terms.js';
import { openTelemetry } from '../../server/stores/telemetry/store.js';
import { freshDatabase } from '../postgres/database.js';
import { recordsSource } from './records-source.js';
import { COLUMNS_OF_001, VARIED_START as START, variedRecord } from './request-rows.js';

/**
 * The request-log store on PostgreSQL holds what the SQLite store holds for the same rows:
 * every row and every rollup cell, to the unit, with sketches merged by the database. Rows,
 * rollups and spend commit together; replicas writing the same cells at once lose nothing.
 */

vi.setConfig({ testTimeout: 60_000 });

const LIFETIMES = { accessSeconds: 900, refreshSeconds: 3600 };
const record = variedRecord;
const range = (from: number, to: number) => Array.from({ length: to - from }, (_, n) => record(from + n));

/** Every row of a table, ordered by all its columns: the same on both stores. */
function tableSql(table: string, columns: readonly string[]): string {
  return `SELECT ${columns.join(', ')} FROM ${table} ORDER BY ${columns
    .filter((c) => c !== 'latency' && c !== 'ttft')
    .join(', ')}`;
}

const REQUEST_ORDER = `SELECT ${REQUEST_COLUMNS.join(', ')} FROM requests ORDER BY req_id`;

/** Rows from SQLite with BLOBs as Buffers, as pg gives BYTEA. */
const asBuffers = (rows: unknown[]) =>
  rows.map((row) =>
    Object.fromEntries(
      Object.entries(row as Record<string, unknown>).map(([k, v]) => [k, v instanceof Uint8Array ? Buffer.from(v) : v]),
    ),
  );

describe('the request-log store on PostgreSQL', () => {
  const folder = mkdtempSync(join(tmpdir(), 'gc-telemetry-pg-'));
  let database: Awaited<ReturnType<typeof freshDatabase>>;
  let pool: pg.Pool;
  let control: PgControlStore;
  let log: PgRequestLog;
  let sqliteControl: SqliteControlStore;
  let orgId = '';
  let keyIds: string[] = [];

  beforeAll(async () => {
    database = await freshDatabase();
    // Telemetry and control in one database, as a small deployment runs them.
    control = await PgControlStore.open(database.url, LIFETIMES);
    log = await PgRequestLog.open(database.url);
    pool = openPool(database.url);
    sqliteControl = SqliteControlStore.open(join(folder, 'control.db'), LIFETIMES);
    const founded = await signUp(control, {
      email: 'telemetry@example.com',
      passwordHash: 'argon2id$x',
      organizationName: 'Telemetry',
      sourceIp: '10.0.0.1',
      now: START,
    });
    orgId = founded.organization.id;
    const projectId = (await control.organizations.projects(orgId))[0]!.id;
    keyIds = [];
    for (const name of ['one', 'two']) {
      const issued = await issueKey(control, Buffer.alloc(32, 3), {
        orgId,
        actorId: founded.account.id,
        projectId,
        name,
        environment: 'production',
        expiresAt: null,
        creditLimitMicro: null,
        allowedModels: null,
        rateLimitRpm: 1_000,
        sourceIp: '10.0.0.1',
        now: START,
      });
      keyIds.push(issued.id);
    }
  });
  afterAll(async () => {
    await log?.close();
    await pool?.end();
    await control?.close();
    await sqliteControl?.close();
    await database?.drop();
    rmSync(folder, { recursive: true, force: true });
  });

  /**
   * The search index holds every row's strings once, as common (its set) or rare, and counts each
   * set's rows by hour as the rows are.
   */
  async function expectSearchIndexed() {
    const rows = await pool.query<{ req_id: string; metadata: string; rare: string; common: string[] | null }>(
      `SELECT r.req_id, r.metadata, r.search_rare AS rare,
        (SELECT array_agg(c.text) FROM search_sets s JOIN search_common c ON c.id = ANY(s.terms)
          WHERE s.id = r.search_set) AS common
      FROM requests r`,
    );
    for (const row of rows.rows) {
      const held = [...row.rare.split('\u0001'), ...(row.common ?? [])].sort();
      expect(held, row.req_id).toEqual(
        searchTexts(row)
          .map((text) => text.replaceAll('\u0000', '\uFFFD'))
          .sort(),
      );
    }
    const counted =
      'SELECT org_id, search_set AS set_id, ts / 3600000 * 3600000 AS hour, COUNT(*) AS rows FROM requests';
    const hours = await pool.query(
      `SELECT * FROM (${counted} WHERE search_set IS NOT NULL GROUP BY 1, 2, 3) AS c ORDER BY 1, 2, 3`,
    );
    const kept = await pool.query('SELECT org_id, set_id, hour, rows FROM search_hours ORDER BY 1, 2, 3');
    expect(kept.rows).toEqual(hours.rows);
  }

  /**
   * PostgreSQL holds every row and rollup cell the SQLite store at `path` holds (`rows` rows, when
   * given), and its search index holds its rows; returns SQLite's tables, as rows.
   */
  async function expectAsInSqlite(path: string, rows?: number) {
    await expectSearchIndexed();
    const sqlite = openTelemetry(path);
    const tables = [
      { name: 'requests', sql: REQUEST_ORDER },
      ...ROLLUP_TABLES.map((t) => ({ name: t.name, sql: tableSql(t.name, t.columns) })),
    ];
    const lite: Record<string, unknown[]> = {};
    try {
      for (const { name, sql } of tables) lite[name] = asBuffers(sqlite.prepare(sql).all());
    } finally {
      sqlite.close();
    }
    for (const { name, sql } of tables) {
      const postgres = (await pool.query(sql)).rows;
      if (name === 'requests' && rows !== undefined) expect(postgres).toHaveLength(rows);
      expect(postgres, name).toEqual(lite[name]);
    }
    return lite;
  }

  // The search's numbered strings and sets stay: the writers remember them.
  const clear = () =>
    pool.query(
      `TRUNCATE requests, request_ids, spend_outbox, search_hours, ${ROLLUP_TABLES.map((t) => t.name).join(', ')}`,
    );

  it('merges latency sketches in the database as the server merges them, in either encoding', async () => {
    // Counts of every width, and sketches in the first encoding ((int16, uint32) pairs, no header).
    const sketch = fc
      .tuple(
        fc.array(
          fc.tuple(
            fc.integer({ min: -32_768, max: 32_767 }),
            fc.oneof(fc.integer({ min: 1, max: 255 }), fc.integer({ min: 1, max: 2 ** 24 })),
          ),
          { maxLength: 40 },
        ),
        fc.boolean(),
      )
      .map(([pairs, first]) => {
        const bins: Bins = new Map();
        for (const [bin, count] of pairs) addBin(bins, bin, count);
        if (!first) return encode(bins);
        const wide = Buffer.alloc(6 * bins.size);
        [...bins]
          .sort((x, y) => x[0] - y[0])
          .forEach(([bin, count], i) => {
            wide.writeInt16LE(bin, 6 * i);
            wide.writeUInt32LE(count, 6 * i + 2);
          });
        return wide;
      });
    await fc.assert(
      fc.asyncProperty(fc.option(sketch, { nil: null }), fc.option(sketch, { nil: null }), async (a, b) => {
        const merged = await pool.query<{ s: Buffer | null }>('SELECT sketch_merge($1::bytea, $2::bytea) AS s', [a, b]);
        expect(merged.rows[0]!.s).toEqual(mergeEncoded(a, b));
      }),
      { numRuns: 300 },
    );
  });

  it('holds every row and rollup cell the SQLite store holds for the same rows, written in other batches', async () => {
    await clear();
    const path = join(folder, 'same-rows.db');
    // Cells straddle the writes on both sides, cut in different places.
    for (const [from, to] of [
      [0, 2_500],
      [2_500, 6_000],
    ] as const) {
      await recordRequests(sqliteControl, path, range(from, to));
    }
    for (const [from, to] of [
      [0, 700],
      [700, 3_100],
      [3_100, 3_101],
      [3_101, 6_000],
    ] as const) {
      await recordRequests(control, log, range(from, to));
    }
    const lite = await expectAsInSqlite(path, 6_000);
    for (const table of Object.keys(lite)) expect(lite[table]!.length, table).toBeGreaterThan(0);
  });

  it('writes nothing when a request id is stored already, and only the new rows when told to skip them', async () => {
    await clear();
    await recordRequests(control, log, range(0, 100));
    const totals = async () =>
      (
        await pool.query<{ rows: number; requests: number; outbox: number }>(
          `SELECT (SELECT COUNT(*) FROM requests)::int AS rows,
            (SELECT SUM(requests) FROM rollup_day)::int AS requests,
            (SELECT COUNT(*) FROM spend_outbox)::int AS outbox`,
        )
      ).rows[0]!;
    const before = await totals();
    expect(before).toEqual({ rows: 100, requests: 100, outbox: 0 });

    const error = await recordRequests(control, log, range(95, 130)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RepeatedRequest);
    expect((error as RepeatedRequest).reqId).toBe('req-000095');
    // Repeated within one batch, too.
    const twice = await recordRequests(control, log, [record(500), record(501), record(500)]).catch((e: unknown) => e);
    expect((twice as RepeatedRequest).reqId).toBe('req-000500');
    expect(await totals()).toEqual(before);

    expect(await recordRequests(control, log, range(95, 130), { skipStored: true, report: () => undefined })).toBe(30);
    expect(await totals()).toEqual({ rows: 130, requests: 130, outbox: 0 });

    // The rollups hold what the SQLite store holds for the 130 rows written once.
    const path = join(folder, 'skipped.db');
    await recordRequests(sqliteControl, path, range(0, 130));
    await expectAsInSqlite(path);
  });

  it('settles what the rows cost into their keys once, and leaves no outbox behind', async () => {
    await clear();
    const spent = async () => Promise.all(keyIds.map(async (id) => (await control.keys.find(id))!.spent_micro));
    const before = await spent();
    const rows = Array.from({ length: 400 }, (_, n) => record(n, keyIds));
    await recordRequests(control, log, rows.slice(0, 150));
    await recordRequests(control, log, rows.slice(150));
    const expected = keyIds.map((id) =>
      rows.filter((row) => row.key_id === id).reduce((sum, row) => sum + row.cost_micro, 0),
    );
    expect(expected.every((micro) => micro > 0)).toBe(true);
    expect(await spent()).toEqual(before.map((micro, k) => micro + expected[k]!));
    expect((await pool.query('SELECT 1 FROM spend_outbox')).rowCount).toBe(0);
    expect((await pool.query('SELECT 1 FROM settled_spend')).rowCount).toBe(0);
  });

  it('imports a source in one transaction whose cells add up with writes made beside it, as SQLite holds them', async () => {
    await clear();
    // The source: a telemetry file of 6,000 rows, imported in staged parts.
    const source = join(folder, 'import-source.db');
    await recordRequests(sqliteControl, source, range(0, 6_000));
    const other = await PgRequestLog.open(database.url);
    try {
      // Writes into the same cells while the import runs, from this replica and another.
      const beside = Array.from({ length: 8 }, (_, w) => range(6_000 + w * 250, 6_000 + (w + 1) * 250));
      await Promise.all([
        recordRequestsFrom(control, log, storedRowsSource(source)),
        ...beside.map((rows, w) => recordRequests(control, w % 2 ? other : log, rows)),
      ]);
    } finally {
      await other.close();
    }
    const path = join(folder, 'imported.db');
    await recordRequests(sqliteControl, path, range(0, 8_000));
    await expectAsInSqlite(path, 8_000);
  });

  /** The indexes of `requests`, as PostgreSQL would make them again. */
  const requestIndexes = async () =>
    (
      await pool.query<{ indexdef: string }>(
        "SELECT indexdef FROM pg_indexes WHERE tablename = 'requests' ORDER BY indexname",
      )
    ).rows.map((row) => row.indexdef);

  /** Imports a telemetry file; returns the kinds of the events it reported. */
  async function importFile(path: string, rows: number): Promise<ImportEvent['kind'][]> {
    const events: ImportEvent[] = [];
    expect(await recordRequestsFrom(control, log, storedRowsSource(path), { report: (e) => events.push(e) })).toBe(
      rows,
    );
    return events.map((event) => event.kind);
  }

  it('imports into an empty log with its indexes built after the rows: the same indexes, rows and cells', async () => {
    await clear();
    const indexes = await requestIndexes();
    // Two by organisation, by key, by search set, and the trigram index (the ids' key is request_ids').
    expect(indexes).toHaveLength(5);
    // Rows out of time order, in two parts (the reader's held cells overflow once): the same
    // hours and days in both, summed by the import, and the same minutes, merged by the database.
    const first = join(folder, 'empty-first.db');
    await recordRequests(sqliteControl, first, range(0, 20_000));
    expect(await importFile(first, 20_000)).toContain('empty-log');
    expect(await requestIndexes()).toEqual(indexes);
    // Built for each day table too, and valid.
    const built = await pool.query<{ tables: number; indexes: number; invalid: number }>(
      `SELECT (SELECT COUNT(*) FROM pg_inherits WHERE inhparent = 'requests'::regclass)::int AS tables,
         COUNT(*)::int AS indexes, COUNT(*) FILTER (WHERE NOT i.indisvalid)::int AS invalid
         FROM pg_index i JOIN pg_inherits h ON h.inhrelid = i.indrelid WHERE h.inhparent = 'requests'::regclass`,
    );
    expect(built.rows[0]!.tables).toBeGreaterThan(1);
    expect(built.rows[0]).toEqual({ tables: built.rows[0]!.tables, indexes: 5 * built.rows[0]!.tables, invalid: 0 });
    await expectAsInSqlite(first, 20_000);

    // The log holds rows now: the next import shares it, into the same cells.
    const second = join(folder, 'empty-second.db');
    await recordRequests(sqliteControl, second, range(20_000, 21_000));
    expect(await importFile(second, 1_000)).not.toContain('empty-log');
    await recordRequests(sqliteControl, first, range(20_000, 21_000));
    await expectAsInSqlite(first, 21_000);
  });

  it('leaves an empty log and its indexes as they were when an import into it fails', async () => {
    await clear();
    const indexes = await requestIndexes();
    const error = await recordRequestsFrom(control, log, storedRowsSource(join(folder, 'no-such.db'))).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ImportSourceError);
    expect(await requestIndexes()).toEqual(indexes);
    expect((await pool.query('SELECT 1 FROM requests')).rowCount).toBe(0);
  });

  it('imports into an empty log two texts PostgreSQL stores alike as one cell', async () => {
    await clear();
    // Two minutes of one day: one day cell for the model once stored, from two the reader summed apart.
    const source = join(folder, 'alike-source.db');
    // And the characters COPY's text format escapes, in a row's texts copied into an empty log.
    const agent = 'agent\twith\nbreaks\r\\N and \\ \u0000';
    await recordRequests(sqliteControl, source, [
      { ...record(1), model: 'svc/\u0000x' },
      { ...record(4), model: 'svc/\uFFFDx', user_agent: agent },
    ]);
    expect(await importFile(source, 2)).toContain('empty-log');
    const day = await pool.query<{ requests: number }>(
      'SELECT SUM(requests)::int AS requests FROM rollup_dim_day WHERE value = $1',
      ['svc/\uFFFDx'],
    );
    expect(day.rows[0]!.requests).toBe(2);
    const stored = await pool.query<{ user_agent: string }>('SELECT user_agent FROM requests WHERE req_id = $1', [
      record(4).req_id,
    ]);
    expect(stored.rows).toEqual([{ user_agent: agent.replace('\u0000', '\uFFFD') }]);
  });

  it('writes nothing when an import repeats a stored id, its next rows sent already', async () => {
    await clear();
    await recordRequests(control, log, [record(0)]);
    // The repeat in the first batch: the second is on its way when the first is checked.
    const source = join(folder, 'repeat-source.db');
    await recordRequests(sqliteControl, source, range(0, 10_000));
    const error = await recordRequestsFrom(control, log, storedRowsSource(source)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RepeatedRequest);
    expect((error as RepeatedRequest).reqId).toBe('req-000000');
    // Nothing of the import, now or once anything it sent could have run.
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect((await pool.query('SELECT req_id FROM requests')).rows).toEqual([{ req_id: 'req-000000' }]);
    await expectSearchIndexed();
  });

  it('names the row that repeats an id when an import copies into an empty log', async () => {
    await clear();
    const indexes = await requestIndexes();
    const inserting = async (batches: RequestRecord[][]) => {
      const write = await log.beginImport();
      try {
        expect(write.intoEmpty).toBe(true);
        const inserted: string[][] = [];
        for (const batch of batches) {
          // As the import's reading thread gives them: into an empty log, each row as its COPY line too.
          const columns = new RequestColumnsBuilder(batch.length);
          for (const row of batch) columns.add(row, 0);
          const rows = columns.take();
          inserted.push([...(await write.insert(requestArrays(rows), requestCopyLines(rows)))]);
        }
        return inserted;
      } finally {
        await write.close();
      }
    };
    const ids = (records: RequestRecord[]) => records.map((row) => row.req_id);
    // Repeated within the batch, past the rows COPY buffers together: the ids before it are the inserted ones.
    const batch = range(0, 1_500);
    batch[1_200] = { ...batch[1_200]!, req_id: batch[12]!.req_id };
    expect(await inserting([batch])).toEqual([ids(batch.slice(0, 1_200))]);
    // Repeating an id of an earlier batch.
    expect(await inserting([range(0, 10), [record(10), record(3), record(11)]])).toEqual([
      ids(range(0, 10)),
      ids([record(10)]),
    ]);
    expect((await pool.query('SELECT 1 FROM requests')).rowCount).toBe(0);
    expect(await requestIndexes()).toEqual(indexes);
  });

  describe('a copy of a telemetry file (migrate-store)', () => {
    it('holds its rows and its cells as the file holds them, the cells copied in parts', async () => {
      await clear();
      const indexes = await requestIndexes();
      const source = join(folder, 'copied.db');
      // Enough minutes that the finest cells come in several parts.
      await recordRequests(sqliteControl, source, range(0, 20_000));
      expect(await migrateRequestLog(control, source, database.url)).toEqual({ ok: true, rows: 20_000 });
      const file = openTelemetry(source);
      const minutes = file.prepare('SELECT COUNT(*) FROM rollup_dim_1m').pluck().get() as number;
      file.close();
      expect(minutes).toBeGreaterThan(10_000);
      await expectAsInSqlite(source, 20_000);
      expect(await requestIndexes()).toEqual(indexes);
    });

    it('adds up cells whose texts PostgreSQL stores alike', async () => {
      await clear();
      const source = join(folder, 'copied-alike.db');
      // A part holding the U+0000 text goes by upsert, its cells added to their twins' (else the
      // COPY of a part holding both fails on a repeated key).
      await recordRequests(sqliteControl, source, [
        ...range(0, 12_000).map((row) => ({ ...row, model: 'svc/\uFFFDx' })),
        { ...record(1), req_id: 'req-alike', model: 'svc/\u0000x' },
      ]);
      expect(await migrateRequestLog(control, source, database.url)).toEqual({ ok: true, rows: 12_001 });
      const counted = await pool.query<{ requests: number }>(
        'SELECT SUM(requests)::int AS requests FROM rollup_dim_day WHERE value = $1',
        ['svc/\uFFFDx'],
      );
      expect(counted.rows[0]!.requests).toBe(12_001);
    });

    it('refuses a file whose cells do not count its rows, and cells that do not add up as the file', async () => {
      await clear();
      const indexes = await requestIndexes();
      const source = join(folder, 'copied-checked.db');
      await recordRequests(sqliteControl, source, range(0, 1_000));
      const file = openTelemetry(source);
      const key = 'org_id, bucket, project_id, key_id, model';
      const oneCell = `(${key}) = (SELECT ${key} FROM rollup_day ORDER BY ${key} LIMIT 1)`;
      file.exec(`UPDATE rollup_day SET requests = requests + 1 WHERE ${oneCell}`);
      expect(await migrateRequestLog(control, source, database.url)).toEqual({
        ok: false,
        error: "telemetry.db's rollups count 1001 requests, its rows 1000: not copied",
      });
      file.exec(`UPDATE rollup_day SET requests = requests - 1 WHERE ${oneCell}`);
      file.close();

      // Cells left in the database without their rows: the copy would add to them.
      await recordRequests(control, log, [record(5_000)]);
      await pool.query('DELETE FROM requests');
      await pool.query('DELETE FROM request_ids');
      expect(await migrateRequestLog(control, source, database.url)).toEqual({
        ok: false,
        error: 'the database already holds a request log: migrate-store copies into an empty one',
      });

      // Cells that do not add up as the source's: nothing commits.
      await clear();
      const [table] = ROLLUP_TABLES;
      const lite = openTelemetry(source);
      const cell = lite
        .prepare(`SELECT ${table!.columns.join(', ')} FROM ${table!.name} LIMIT 1`)
        .raw()
        .get();
      lite.close();
      const write = await log.beginImport();
      try {
        await write.addCells({ table: 0, rows: [cell as RollupRow] });
        const sums = ROLLUP_TABLES.map(() => 0n);
        sums[0] = BigInt((cell as number[])[table!.keyColumns]!) + 1n;
        await expect(write.commit(new Map(), sums)).rejects.toThrow(
          new RegExp(
            `^the copied ${table!.name} adds up to ${sums[0] - 1n} ${table!.sums[0]}, the source's to ${sums[0]}$`,
          ),
        );
      } finally {
        await write.close();
      }
      expect((await pool.query(`SELECT 1 FROM ${table!.name}`)).rowCount).toBe(0);
      expect(await requestIndexes()).toEqual(indexes);
    });
  });

  it('names the repeated id of an import into an empty log, its rows sent before they are checked', async () => {
    await clear();
    const indexes = await requestIndexes();
    // In the last batch, which carries the cells: they are written while its rows may be copied.
    const error = await recordRequestsFrom(
      control,
      log,
      recordsSource({ count: 5_000, repeat: { at: 4_999, of: 10 } }),
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RepeatedRequest);
    expect((error as RepeatedRequest).reqId).toBe('req-000010');
    expect((await pool.query('SELECT 1 FROM requests')).rowCount).toBe(0);
    expect(await requestIndexes()).toEqual(indexes);
    expect(await recordRequestsFrom(control, log, recordsSource({ count: 5_000, repeat: null }))).toBe(5_000);
  });

  it('lets at most one of two imports starting on an empty log hold it; both write everything', async () => {
    await clear();
    const [a, b] = [join(folder, 'two-a.db'), join(folder, 'two-b.db')];
    await recordRequests(sqliteControl, a, range(0, 3_000));
    await recordRequests(sqliteControl, b, range(3_000, 6_000));
    const other = await PgRequestLog.open(database.url);
    const events: ImportEvent[][] = [[], []];
    try {
      // Both may find it empty and ask for it: one waits for the other, none fails.
      await Promise.all(
        [a, b].map((path, i) =>
          recordRequestsFrom(control, i ? other : log, storedRowsSource(path), { report: (e) => events[i]!.push(e) }),
        ),
      );
    } finally {
      await other.close();
    }
    const took = events.filter((reported) => reported.some((event) => event.kind === 'empty-log'));
    expect(took.length).toBeLessThanOrEqual(1);
    const path = join(folder, 'two-both.db');
    await recordRequests(sqliteControl, path, range(0, 6_000));
    await expectAsInSqlite(path, 6_000);
  });

  it('shares an empty log that another transaction holds rather than wait for it', async () => {
    await clear();
    const source = join(folder, 'held-source.db');
    await recordRequests(sqliteControl, source, range(0, 2_000));
    // A writer's transaction in progress: it lets the import's rows in, not the import alone.
    const holder = await pool.connect();
    try {
      await holder.query('BEGIN');
      await holder.query('LOCK TABLE requests IN ROW EXCLUSIVE MODE');
      expect(await importFile(source, 2_000)).not.toContain('empty-log');
      await holder.query('COMMIT');
    } finally {
      holder.release();
    }
    await expectAsInSqlite(source);
  });

  it('leaves an import vacuumed: its rows counted from the indexes alone, their statistics fresh', async () => {
    await clear();
    const source = join(folder, 'vacuum-source.db');
    await recordRequests(sqliteControl, source, range(0, 3_000));
    await recordRequestsFrom(control, log, storedRowsSource(source));
    // All-visible pages: an index-only scan (a count by minimum cost) reads no row from the table.
    // Summed over the day tables (migrations-postgres/007).
    const { rows } = await pool.query<{ relpages: number; relallvisible: number; reltuples: number }>(
      `SELECT SUM(relpages)::int AS relpages, SUM(relallvisible)::int AS relallvisible, SUM(reltuples)::int AS reltuples
         FROM pg_class WHERE oid IN (SELECT inhrelid FROM pg_inherits WHERE inhparent = 'requests'::regclass)`,
    );
    expect(rows[0]!.relpages).toBeGreaterThan(0);
    expect(rows[0]!.relallvisible).toBe(rows[0]!.relpages);
    expect(rows[0]!.reltuples).toBe(3_000);
    // Written frozen (COPY FREEZE into day tables the import made or emptied): no VACUUM to come
    // reads and writes them again, as one otherwise does for every page before the ids wrap.
    await pool.query('CREATE EXTENSION IF NOT EXISTS pg_visibility');
    const frozen = await pool.query<{ pages: number; frozen: number }>(
      `SELECT SUM(c.relpages)::int AS pages, SUM(v.all_frozen)::int AS frozen
         FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid, pg_visibility_map_summary(i.inhrelid) v
        WHERE i.inhparent = 'requests'::regclass`,
    );
    expect(frozen.rows[0]!.frozen).toBe(frozen.rows[0]!.pages);
  });

  it('stores a text PostgreSQL cannot hold (U+0000) as U+FFFD rather than failing the batch', async () => {
    await clear();
    const odd = { ...record(1), req_id: 'req-\u0000-odd', model: 'svc/\u0000fast', metadata: '{"note":"a\\u0000b"}' };
    expect(await recordRequests(control, log, [odd, record(2)])).toBe(2);
    const stored = await pool.query<{ req_id: string; model: string }>(
      'SELECT req_id, model FROM requests ORDER BY ts',
    );
    expect(stored.rows.map((row) => row.model)).toContain('svc/\uFFFDfast');
    expect(stored.rows.map((row) => row.req_id)).toContain('req-\uFFFD-odd');
    // Sent again, it is the same row: skipped, not refused.
    expect(await recordRequests(control, log, [odd], { skipStored: true, report: () => undefined })).toBe(0);
    // Its metadata's escaped U+0000 is searched as U+FFFD, not refused by jsonb.
    const client = await pool.connect();
    try {
      const filter = { orgId: odd.org_id, from: 0, to: odd.ts + 1, search: 'a\uFFFDb' };
      const page = await new AnalyticsQueries(new PgSql(client)).run({
        kind: 'requests',
        filter,
        limit: 10,
        offset: 0,
      });
      expect(page.rows.map((row) => row.req_id)).toEqual(['req-\uFFFD-odd']);
    } finally {
      client.release();
    }
  });

  it('loses nothing when replicas write the same cells at once', async () => {
    await clear();
    const other = await PgRequestLog.open(database.url);
    try {
      // Sixteen writes, eight from each replica, each in its own order, all into the same cells.
      const writes = Array.from({ length: 16 }, (_, w) => {
        const rows = range(w * 250, (w + 1) * 250);
        const shift = (w * 37) % rows.length;
        return [...rows.slice(shift), ...rows.slice(0, shift)];
      });
      await Promise.all(writes.map((rows, w) => recordRequests(control, w % 2 ? other : log, rows)));
    } finally {
      await other.close();
    }
    const path = join(folder, 'concurrent.db');
    await recordRequests(sqliteControl, path, range(0, 4_000));
    await expectAsInSqlite(path, 4_000);
  });

  it('finds rows written before the search index by the index, once the store is opened again', async () => {
    const earlier = await freshDatabase();
    const folderOf001 = mkdtempSync(join(tmpdir(), 'gc-telemetry-001-'));
    const before = openPool(earlier.url);
    try {
      // The store as migration 001 left it, with rows in it.
      const migrations = new URL('../../server/stores/telemetry/migrations-postgres/', import.meta.url);
      copyFileSync(new URL('001_request_log.sql', migrations), join(folderOf001, '001_request_log.sql'));
      await migratePostgres(before, 'telemetry', pathToFileURL(`${folderOf001}/`));
      const rows = range(0, 300);
      rows[7] = { ...rows[7]!, req_id: 'REQ-ΩMEGA', metadata: JSON.stringify({ City: 'ΣΑΣ Straße', run: 'r3' }) };
      const columns = COLUMNS_OF_001.join(', ');
      await before.query(
        `INSERT INTO requests (${columns}) SELECT * FROM json_populate_recordset(NULL::requests, $1::json)`,
        [JSON.stringify(rows)],
      );
      const reopened = await PgRequestLog.open(earlier.url);
      await reopened.close();
      const client = await before.connect();
      try {
        const queries = new AnalyticsQueries(new PgSql(client));
        const window = { orgId: 'org-main', from: START, to: START + 3 * 86_400_000 };
        const found = async (search: string) =>
          (await queries.run({ kind: 'requests', filter: { ...window, search }, limit: 500, offset: 0 })).rows
            .map((row) => row.req_id)
            .sort();
        const holding = (text: string) =>
          rows
            .filter((row) => row.org_id === 'org-main' && searchTexts(row).some((held) => held.includes(text)))
            .map((row) => row.req_id)
            .sort();
        for (const text of ['req-ωmega', 'σας straße', 'r3', 'run', 't-12']) {
          expect(holding(text).length, text).toBeGreaterThan(0);
          expect(await found(text), text).toEqual(holding(text));
        }
      } finally {
        client.release();
      }
    } finally {
      await before.end();
      await earlier.drop();
      rmSync(folderOf001, { recursive: true, force: true });
    }
  });
});
