import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { AnalyticsQueries } from '../../server/analytics/queries.js';
import type { AnalyticsQuery, GroupBy, Metric, RequestFilter, Scope } from '../../server/analytics/query-types.js';
import { SqliteSql } from '../../server/analytics/sqlite-sql.js';
import { recordRequests } from '../../server/ingest/record-requests.js';
import { SqliteControlStore } from '../../server/stores/control/store.js';
import { expireRows } from '../../server/stores/telemetry/expire-rows.js';
import { REQUEST_COLUMNS, type RequestRecord } from '../../server/stores/telemetry/request-record.js';
import { openTelemetry } from '../../server/stores/telemetry/store.js';
import * as ref from './analytics-reference.js';
import {
  answerText,
  DAY,
  edgesFrom,
  expectPage,
  expectedDashboard,
  expectedTop,
  expectSeries,
  expectSummary,
  HORIZON,
  HOUR,
  keptRows,
  MAIN,
  MINUTE,
  NOW,
  OTHER,
  retentionRows,
  rollupDigests,
  sortTop,
  START,
  traceOf,
  usageGrains,
} from './retention-rows.js';

/**
 * Retention on the SQLite request log (stores/telemetry/expire-rows.ts) with the reads that
 * honour the horizon (analytics/windows.ts `keptSegments`): a read with the horizon counts the
 * whole rollup cells before it and the rows from it on, before, while and after the rows before
 * it are deleted; lists, searches and look-ups by id never show a row older than it; the
 * rollups, the other organisation and every row from the horizon on stay; and a deleted row's
 * rowid (the search index's key) is never given to a new row.
 */

// Reads of ~25,000 rows checked against the reference, hundreds of them, on two shared cores.
vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

const scratch = mkdtempSync(join(tmpdir(), 'gc-retention-'));
const path = join(scratch, 'telemetry.db');

// Two imports of rows over the four days, then rows older than the horizon imported last: they
// hold the largest rowids, the very last one MAIN's (never deleted: its rowid would be reused).
const EARLY = retentionRows(12_000, { seed: 11, prefix: 'req-a', from: START, to: NOW, mainShare: 0.75 });
const SECOND = [
  ...retentionRows(12_000, { seed: 12, prefix: 'req-b', from: START, to: NOW, mainShare: 0.75 }),
  // Rows at the horizon's edges, in both organisations.
  ...retentionRows(6, { seed: 13, prefix: 'edge-m', from: 0, to: 1 }).map((row, i) => ({
    ...row,
    ts: HORIZON + [-HOUR, -MINUTE, -1, 0, 1, -17 * MINUTE - 20_000][i]!,
  })),
  ...retentionRows(3, { seed: 14, prefix: 'edge-o', from: 0, to: 1 }).map((row, i) => ({
    ...row,
    org_id: OTHER,
    ts: HORIZON + [-1, 0, 1][i]!,
  })),
];
const LATE = [
  ...retentionRows(250, { seed: 15, prefix: 'late-', from: START, to: HORIZON - HOUR, mainShare: 0.7 }),
  ...retentionRows(50, { seed: 16, prefix: 'late-', first: 250, from: START, to: HORIZON - HOUR }),
];
const ALL = [...EARLY, ...SECOND, ...LATE];
const LAST = LATE.at(-1)!;

let control: SqliteControlStore;
let reader: BetterSqlite3.Database;
let writer: BetterSqlite3.Database;
let queries: AnalyticsQueries;
/** The largest rowid before any deletion, and the rows and rollups as they were. */
let lastRowid = 0;
let rollupsBefore: Record<string, string>;
let otherBefore: unknown[];

beforeAll(async () => {
  control = SqliteControlStore.open(join(scratch, 'control.db'), { accessSeconds: 900, refreshSeconds: 3600 });
  await recordRequests(control, path, EARLY);
  await recordRequests(control, path, SECOND);
  await recordRequests(control, path, LATE);
  writer = openTelemetry(path);
  reader = new BetterSqlite3(path, { readonly: true });
  queries = new AnalyticsQueries(new SqliteSql(reader));
  lastRowid = reader.prepare('SELECT MAX(rowid) FROM requests').pluck().get() as number;
  rollupsBefore = rollupDigests(reader);
  otherBefore = otherRows();
});
afterAll(async () => {
  reader?.close();
  writer?.close();
  await control?.close();
  rmSync(scratch, { recursive: true, force: true });
});

const otherRows = () =>
  reader
    .prepare(`SELECT rowid, ${REQUEST_COLUMNS.join(', ')} FROM requests WHERE org_id = ? ORDER BY rowid`)
    .all(OTHER);
const count = (where: string, ...params: unknown[]) =>
  reader
    .prepare(`SELECT COUNT(*) FROM requests WHERE ${where}`)
    .pluck()
    .get(...params) as number;

/** Windows: the whole log, ragged ones across the horizon, one ending just after it, one wholly before, two after it. */
const WINDOWS = {
  whole: { from: START - HOUR + 17, to: NOW + 5_000 },
  ragged: { from: HORIZON - 30 * HOUR - 7 * MINUTE - 13_500, to: NOW - HOUR + 12_345 },
  near: { from: HORIZON - 17 * MINUTE - 43_250, to: HORIZON + 2 * HOUR + 5_000 },
  past: { from: HORIZON - 50 * HOUR + 123, to: HORIZON - 3 * HOUR - 4_567 },
  after: { from: HORIZON + 5 * HOUR + 777, to: NOW },
  at: { from: HORIZON, to: NOW },
};
type WindowName = keyof typeof WINDOWS;
const SCOPES: Omit<Scope, 'orgId' | 'from' | 'to'>[] = [
  {},
  { model: 'svc/fast' },
  { keyId: 'k-a' },
  { projectId: 'p0', model: 'openai/gpt-4o' },
];
const scopeOf = (name: WindowName, narrowed: object, horizon: number | undefined): Scope => ({
  orgId: MAIN,
  ...WINDOWS[name],
  ...narrowed,
  ...(horizon === undefined ? {} : { horizon }),
});

interface Check {
  name: string;
  query: AnalyticsQuery;
  /** Holds the answer to the reference over `rows`, the store's rows as they were written. */
  expect: (answer: any, rows: readonly RequestRecord[]) => void;
}

/** Summaries, comparisons, timeseries, dashboards and top tables, with the horizon or without. */
function checks(windows: WindowName[], horizon: number | undefined): Check[] {
  const list: Check[] = [];
  const add = (query: AnalyticsQuery, expect: Check['expect']) =>
    list.push({ name: `${query.kind} ${JSON.stringify(query)}`, query, expect });
  // Without the horizon, the windows compared with are after it too: before it, rows are gone.
  const previous = horizon === undefined ? WINDOWS.after : WINDOWS.past;
  const earlier = horizon === undefined ? WINDOWS.at : WINDOWS.near;
  for (const name of windows) {
    for (const narrowed of SCOPES) {
      const scope = scopeOf(name, narrowed, horizon);
      add({ kind: 'summary', scope }, (answer, rows) =>
        expectSummary(answer, keptRows(rows, scope, scope.from, scope.to + 1, usageGrains(scope), horizon), 'summary'),
      );
      // Buckets of 5 h 2.5 min from before the window: their edges fall inside five minutes.
      const edges = edgesFrom(scope.from - 37 * MINUTE - 1_234, 5 * HOUR + 150_000, scope);
      add({ kind: 'dashboard', scope, edges, previous }, (answer, rows) =>
        expect(answer).toEqual(expectedDashboard(rows, scope, edges, previous)),
      );
    }
    const scope = scopeOf(name, {}, horizon);
    add({ kind: 'compare', scope, previous: earlier }, (answer, rows) => {
      expectSummary(
        answer.current,
        keptRows(rows, scope, scope.from, scope.to + 1, usageGrains(scope), horizon),
        'now',
      );
      const before = { ...scope, ...earlier };
      expectSummary(
        answer.previous,
        keptRows(rows, before, before.from, before.to + 1, usageGrains(before), horizon),
        'before',
      );
    });
    const metrics: Metric[] = ['volume', 'latency', 'ttft', 'tok_s', 'token_usage'];
    const series: { narrowed: object; groupBy: GroupBy | null }[] = [
      { narrowed: {}, groupBy: null },
      { narrowed: {}, groupBy: 'model' },
      { narrowed: { keyId: 'k-a' }, groupBy: 'model' },
      { narrowed: { projectId: 'p0' }, groupBy: null },
    ];
    for (const intervalMs of [MINUTE, 5 * MINUTE, HOUR, DAY]) {
      for (const { narrowed, groupBy } of series) {
        // A minute's points over four days are many: minutes only near the horizon.
        if (intervalMs === MINUTE && name !== 'near') continue;
        const scope = scopeOf(name, narrowed, horizon);
        for (const metric of intervalMs === HOUR ? metrics : (['volume', 'tok_s'] as Metric[])) {
          add({ kind: 'timeseries', scope, metric, intervalMs, groupBy }, (answer, rows) =>
            expectSeries(
              answer,
              keptRows(rows, scope, scope.from, scope.to + 1, usageGrains(scope, { intervalMs, groupBy }), horizon),
              metric,
              intervalMs,
              groupBy,
              'timeseries',
            ),
          );
        }
      }
    }
    for (const [narrowed, groupBy] of [
      [{}, 'model'],
      [{}, 'key'],
      [{ keyId: 'k-a' }, 'model'],
      [{ model: 'svc/fast' }, 'project'],
    ] as [object, GroupBy][]) {
      const scope = scopeOf(name, narrowed, horizon);
      const trendEdges = edgesFrom(scope.from, 12 * HOUR + 60_000, scope);
      add({ kind: 'top', scope, groupBy, previous, trendEdges }, (answer, rows) =>
        expect(sortTop(answer)).toEqual(expectedTop(rows, scope, groupBy, previous, trendEdges)),
      );
    }
  }
  return list;
}

const WITH_HORIZON = checks(['whole', 'ragged', 'near', 'past', 'after'], HORIZON);
/** The answers before any deletion, by check. */
const answers = new Map<string, unknown>();

describe('reads with the horizon over a store whose old rows are deleted', () => {
  it('answer, before any deletion, what the reference answers over the rows the horizon keeps', async () => {
    expect(count('org_id = ? AND ts < ?', MAIN, HORIZON)).toBeGreaterThan(8_000);
    for (const check of WITH_HORIZON) {
      const answer = answerText(await queries.run(check.query));
      check.expect(answer, ALL);
      answers.set(check.name, answer);
    }
    // The horizon does leave rows out: those of the partial minutes before it, and all of them
    // before it where there are no cells (the dashboard's by two dimensions).
    const near = (horizon?: number) => queries.run({ kind: 'summary', scope: scopeOf('near', {}, horizon) });
    expect((await near(HORIZON)).requests).toBeGreaterThan(100);
    expect((await near(HORIZON)).requests).toBeLessThan((await near()).requests);
    const board = async (horizon?: number) => {
      const scope = scopeOf('ragged', { projectId: 'p0', model: 'openai/gpt-4o' }, horizon);
      return (await queries.run({ kind: 'dashboard', scope, edges: [scope.from, scope.to + 1], previous: scope }))
        .current.measures[0]!;
    };
    expect(await board(HORIZON)).toBe(
      ALL.filter((r) => r.org_id === MAIN && r.project_id === 'p0' && r.model === 'openai/gpt-4o').filter(
        (r) => r.ts >= HORIZON && r.ts <= WINDOWS.ragged.to,
      ).length,
    );
    expect(await board(HORIZON)).toBeLessThan((await board()) - 500);
  });

  it('list, search and find by id no row older than the horizon', async () => {
    await expectListsFromHorizon(ALL, { deleted: false });
  });

  it('stay the same while the rows go, 500 at a time, oldest first, and after', async () => {
    const old = ALL.filter((row) => row.org_id === MAIN && row.ts < HORIZON);
    const newer = count('org_id = ? AND ts >= ?', MAIN, HORIZON);
    // The limit holds for every call, and the oldest go first.
    const oldestFirst = old
      .filter((row) => row.req_id !== LAST.req_id)
      .map((row) => row.ts)
      .sort((a, b) => a - b);
    expect(expireRows(writer, MAIN, HORIZON, 1)).toBe(1);
    expect(expireRows(writer, MAIN, HORIZON, 7)).toBe(7);
    const left = new Set(
      reader.prepare('SELECT req_id FROM requests WHERE org_id = ? AND ts < ?').pluck().all(MAIN, HORIZON) as string[],
    );
    const deleted = old
      .filter((row) => !left.has(row.req_id))
      .map((row) => row.ts)
      .sort((a, b) => a - b);
    expect(deleted).toEqual(oldestFirst.slice(0, 8));

    const watched = WITH_HORIZON.filter(
      (check) =>
        check.name.startsWith('summary') ||
        (check.name.startsWith('dashboard') && check.name.includes('"model":"svc/fast"')) ||
        (check.name.startsWith('timeseries') && check.name.includes('"intervalMs":300000')),
    );
    let deletions = 8;
    let batches = 0;
    for (;;) {
      const before = count('org_id = ?', MAIN);
      const rows = expireRows(writer, MAIN, HORIZON, 500);
      expect(rows).toBeLessThanOrEqual(500);
      expect(count('org_id = ?', MAIN)).toBe(before - rows);
      deletions += rows;
      batches++;
      // The answers do not move while the rows go (some every batch, all every tenth).
      for (const check of batches % 10 === 0 ? WITH_HORIZON : watched) {
        expect(answerText(await queries.run(check.query)), check.name).toEqual(answers.get(check.name));
      }
      if (rows < 500) break;
    }
    expect(batches).toBeGreaterThan(15);
    // Every old row went but the one with the largest rowid; nothing else did.
    expect(deletions).toBe(old.length - 1);
    expect(
      reader.prepare('SELECT req_id FROM requests WHERE org_id = ? AND ts < ?').pluck().all(MAIN, HORIZON),
    ).toEqual([LAST.req_id]);
    expect(reader.prepare('SELECT MAX(rowid) FROM requests').pluck().get()).toBe(lastRowid);
    expect(expireRows(writer, MAIN, HORIZON, 500)).toBe(0);
    expect(count('org_id = ? AND ts >= ?', MAIN, HORIZON)).toBe(newer);
    expect(count('ts >= ?', HORIZON)).toBe(ALL.filter((row) => row.ts >= HORIZON).length);
    expect(otherRows()).toEqual(otherBefore);
    expect(rollupDigests(reader)).toEqual(rollupsBefore);
    // The same answers as before, which the reference held to.
    for (const check of WITH_HORIZON)
      expect(answerText(await queries.run(check.query)), check.name).toEqual(answers.get(check.name));
  });

  it('still list, search and find by id no row older than the horizon', async () => {
    await expectListsFromHorizon(ALL, { deleted: true });
  });

  it('answer windows from the horizon on exactly without the horizon too', async () => {
    const kept = ALL.filter((row) => row.org_id !== MAIN || row.ts >= HORIZON || row === LAST);
    for (const check of checks(['after', 'at'], undefined)) check.expect(await queries.run(check.query), kept);
    for (const search of [undefined, 'lahore', 'straße', 'tr-', traceOf(keptRow())!]) {
      for (const name of ['after', 'at'] as const) {
        const filter: RequestFilter = { orgId: MAIN, ...WINDOWS[name], ...(search === undefined ? {} : { search }) };
        expectPage(await queries.run({ kind: 'requests', filter, limit: 50, offset: 0 }), kept, filter, 0);
      }
    }
  });

  it('give new rows new rowids: a deleted row’s id or trace finds no new row through the index', async () => {
    // The rows imported last, deleted: their rowids were the largest but one.
    const deleted = LATE.slice(250, 299);
    const fresh = retentionRows(120, { seed: 17, prefix: 'fresh-', from: NOW - 30 * MINUTE, to: NOW - MINUTE });
    // A new row holding a deleted row's trace id, and one taking a deleted row's request id.
    fresh[0] = { ...fresh[0]!, metadata: JSON.stringify({ trace_id: traceOf(deleted[5]!) }) };
    fresh[1] = { ...fresh[1]!, req_id: deleted[7]!.req_id };
    await recordRequests(control, path, fresh);
    const whole = { orgId: MAIN, ...WINDOWS.whole };
    const search = async (text: string, horizon?: number) =>
      (
        await queries.run({
          kind: 'requests',
          filter: { ...whole, search: text.toLowerCase(), ...(horizon === undefined ? {} : { horizon }) },
          limit: 50,
          offset: 0,
        })
      ).rows.map((row) => row.req_id);
    for (const row of deleted) {
      const expected = row === deleted[7] ? [fresh[1]!.req_id] : [];
      expect(await search(row.req_id), row.req_id).toEqual(expected);
      expect(await search(row.req_id, HORIZON), row.req_id).toEqual(expected);
      const trace = traceOf(row);
      if (trace === null) continue;
      const holding = row === deleted[5] ? [fresh[0]!.req_id] : [];
      expect(await search(trace), trace).toEqual(holding);
      expect(await search(trace, HORIZON), trace).toEqual(holding);
    }
    for (const row of fresh.slice(1, 40)) {
      // Found by its own id (and by the parent id some others hold).
      const holding = ref.requestLog(fresh, { orgId: MAIN, now: NOW, rangeMs: DAY, search: row.req_id });
      expect(await search(row.req_id)).toEqual(holding.map((r) => r.req_id));
      expect(holding.map((r) => r.req_id)).toContain(row.req_id);
      expect(await queries.run({ kind: 'request', orgId: MAIN, reqId: row.req_id, horizon: HORIZON })).toEqual(row);
    }
    // No rowid was given twice: the new rows come after the largest there ever was.
    const rowids = reader
      .prepare(`SELECT rowid FROM requests WHERE req_id IN (SELECT value FROM json_each(?))`)
      .pluck()
      .all(JSON.stringify(fresh.map((row) => row.req_id))) as number[];
    expect(rowids).toHaveLength(fresh.length);
    expect(Math.min(...rowids)).toBe(lastRowid + 1);

    // And every search from the horizon holds to the reference over the rows now stored.
    const stored = reader.prepare(`SELECT ${REQUEST_COLUMNS.join(', ')} FROM requests`).all() as RequestRecord[];
    for (const text of ['late-', 'fresh-', 'tr-', 'lahore', traceOf(deleted[5]!)!, deleted[7]!.req_id]) {
      const filter: RequestFilter = { ...whole, search: text, horizon: HORIZON };
      expectPage(await queries.run({ kind: 'requests', filter, limit: 50, offset: 0 }), stored, filter, 0);
    }
  });

  it('bound a read asked with an earlier horizon, or none, by how far the rows were deleted (a retention lengthened again)', async () => {
    const whole = { orgId: MAIN, ...WINDOWS.whole };
    const earlier = HORIZON - 2 * DAY;
    for (const asked of [earlier, undefined]) {
      const at = (horizon: number | undefined) => (horizon === undefined ? {} : { horizon });
      expect(await queries.run({ kind: 'summary', scope: { ...whole, ...at(asked) } })).toEqual(
        await queries.run({ kind: 'summary', scope: { ...whole, horizon: HORIZON } }),
      );
      for (const search of ['lahore', 'late-']) {
        const page = (horizon: number | undefined) =>
          queries.run({ kind: 'requests', filter: { ...whole, search, ...at(horizon) }, limit: 50, offset: 0 });
        expect(await page(asked), search).toEqual(await page(HORIZON));
      }
    }
  });

  it('reconcile the days before the horizon cell against cell, and still find a cell that is wrong there', async () => {
    const days = (from: number, to: number) =>
      Array.from({ length: Math.ceil((to - from) / DAY) + 1 }, (_, i) => from - (from % DAY) + i * DAY);
    let before = 0;
    for (const day of days(WINDOWS.whole.from, WINDOWS.whole.to)) {
      const result = await queries.run({ kind: 'reconcile_day', orgId: MAIN, day });
      expect(result.differenceCount, new Date(day).toISOString()).toBe(0);
      if (day + DAY <= HORIZON) before += result.cellsChecked;
    }
    // Days wholly past the horizon were checked, not skipped.
    expect(before).toBeGreaterThan(100);
    // An hour's cell before the horizon made wrong: the five-minute cells under it disagree.
    const cell = writer
      .prepare('SELECT bucket, project_id, key_id, model FROM rollup_hour WHERE org_id = ? AND bucket < ? LIMIT 1')
      .get(MAIN, HORIZON - HOUR) as { bucket: number; project_id: string; key_id: string; model: string };
    const bump = (by: number) =>
      writer
        .prepare(
          'UPDATE rollup_hour SET requests = requests + ? WHERE org_id = ? AND bucket = ? AND project_id = ? AND key_id = ? AND model = ?',
        )
        .run(by, MAIN, cell.bucket, cell.project_id, cell.key_id, cell.model);
    bump(1);
    try {
      const result = await queries.run({ kind: 'reconcile_day', orgId: MAIN, day: cell.bucket - (cell.bucket % DAY) });
      expect(result.differences).toEqual([
        expect.objectContaining({ table: 'rollup_hour', bucket: cell.bucket, model: cell.model }),
      ]);
    } finally {
      bump(-1);
    }
  });
});

/** A row of MAIN's from the horizon on, with a trace id. */
const keptRow = () => ALL.find((row) => row.org_id === MAIN && row.ts > HORIZON + DAY && traceOf(row) !== null)!;

/** The request log's lists, searches and look-ups by id with the horizon: nothing older than it. */
async function expectListsFromHorizon(
  rows: readonly RequestRecord[],
  { deleted }: { deleted: boolean },
): Promise<void> {
  const oldRow = ALL.find((row) => row.org_id === MAIN && row.ts < HORIZON - DAY && traceOf(row) !== null)!;
  const searches = [
    undefined,
    'lahore',
    'quetta-agri',
    'straße',
    'late-',
    'tr-',
    oldRow.req_id,
    traceOf(oldRow)!,
    LAST.req_id,
    keptRow().req_id,
    traceOf(keptRow())!,
  ];
  const narrowings: Partial<RequestFilter>[] = [{}, { model: 'svc/fast' }, { statusClass: 5 }];
  for (const name of ['whole', 'ragged', 'near', 'past'] as const) {
    for (const search of searches) {
      for (const narrowed of narrowings) {
        const filter: RequestFilter = {
          orgId: MAIN,
          ...WINDOWS[name],
          ...narrowed,
          ...(search === undefined ? {} : { search: search.toLowerCase() }),
          horizon: HORIZON,
        };
        for (const offset of [0, 37]) {
          expectPage(await queries.run({ kind: 'requests', filter, limit: 50, offset }), rows, filter, offset);
        }
      }
    }
  }
  // Searches for old rows find nothing, searches for kept ones find them.
  const found = async (search: string) =>
    (
      await queries.run({
        kind: 'requests',
        filter: { orgId: MAIN, ...WINDOWS.whole, search, horizon: HORIZON },
        limit: 5,
        offset: 0,
      })
    ).total;
  expect(await found(oldRow.req_id)).toBe(0);
  expect(await found(traceOf(oldRow)!)).toBe(0);
  expect(await found(LAST.req_id)).toBe(0);
  expect(await found(keptRow().req_id)).toBe(1);
  expect(await found(traceOf(keptRow())!)).toBe(1);
  // By id: an old row is as if deleted; a row at the horizon or after is found.
  for (const row of [oldRow, LAST, ALL.find((r) => r.req_id.startsWith('edge-m') && r.ts === HORIZON - 1)!]) {
    expect(await queries.run({ kind: 'request', orgId: MAIN, reqId: row.req_id, horizon: HORIZON })).toBeNull();
  }
  for (const row of [keptRow(), ALL.find((r) => r.req_id.startsWith('edge-m') && r.ts === HORIZON)!]) {
    expect(await queries.run({ kind: 'request', orgId: MAIN, reqId: row.req_id, horizon: HORIZON })).toEqual(row);
  }
  // Without a horizon asked, the row kept for its rowid is found until a deletion records how far
  // it went; from then on that bounds every read, and the row is as gone as the others.
  const byId = await queries.run({ kind: 'request', orgId: MAIN, reqId: LAST.req_id });
  if (deleted) expect(byId).toBeNull();
  else expect(byId).toEqual(LAST);
}
