import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { AnalyticsQueries } from '../../server/analytics/queries.js';
import type { AnalyticsQuery, GroupBy, Metric, Scope } from '../../server/analytics/query-types.js';
import { SearchIndex } from '../../server/analytics/search-index.js';
import { SqliteSql } from '../../server/analytics/sqlite-sql.js';
import { complemented, segments } from '../../server/analytics/windows.js';
import { recordRequests } from '../../server/ingest/record-requests.js';
import type { RequestRecord } from '../../server/stores/telemetry/request-record.js';
import { SqliteControlStore } from '../../server/stores/control/store.js';
import { fineCellsFrom, recordFineCellsFrom, thinFineCells } from '../../server/stores/telemetry/fine-cells.js';
import { fineCellsSince, GRAINS, THINNED_TABLES } from '../../server/stores/telemetry/rollup-grains.js';
import { openTelemetry } from '../../server/stores/telemetry/store.js';
import { startServer } from './harness.js';
import {
  DAY,
  edgesFrom,
  expectedDashboard,
  expectSeries,
  expectSummary,
  HOUR,
  keptRows,
  MAIN,
  MINUTE,
  NOW,
  retentionRows,
  rollupDigests,
  seriesText,
  START,
  usageGrains,
} from './retention-rows.js';

/**
 * The fine usage cells (finer than an hour) kept for recent days only (stores/telemetry/
 * fine-cells.ts): deleted an hour of one organisation's at a time, never written for older rows
 * when the start is recorded first, and read only from their start on (analytics/windows.ts), so
 * that every answer stays the reference's over the rows, before, while and after they go.
 */

vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

const scratch = mkdtempSync(join(tmpdir(), 'gc-fine-cells-'));
const ROWS = retentionRows(9_000, { seed: 31, prefix: 'fine-', from: START, to: NOW, mainShare: 0.8 });
/** Three days before NOW's day: the rows' first fifteen hours or so are before it. */
const SINCE = fineCellsSince(NOW);
const FINE_TABLES = THINNED_TABLES;

const WINDOWS = {
  whole: { from: START - HOUR + 17, to: NOW + 5_000 },
  across: { from: SINCE - 5 * HOUR - 7 * MINUTE - 13_500, to: SINCE + 3 * HOUR + 4 * MINUTE + 5_000 },
  old: { from: START + 2 * HOUR + 3 * MINUTE + 1_000, to: SINCE - HOUR - 17 * MINUTE },
  recent: { from: SINCE + 26 * HOUR + 11 * MINUTE, to: NOW },
};
const SCOPES: Omit<Scope, 'orgId' | 'from' | 'to'>[] = [
  {},
  { model: 'svc/fast' },
  { keyId: 'k-a' },
  { projectId: 'p0', model: 'openai/gpt-4o' },
];

let control: SqliteControlStore;
/** Every fine cell written, then thinned. */
const thinnedPath = join(scratch, 'thinned.db');
/** The start recorded before the rows: their older fine cells never written. */
const writtenPath = join(scratch, 'written.db');

beforeAll(async () => {
  control = SqliteControlStore.open(join(scratch, 'control.db'), { accessSeconds: 900, refreshSeconds: 3600 });
  await recordRequests(control, thinnedPath, ROWS.slice(0, 5_000));
  await recordRequests(control, thinnedPath, ROWS.slice(5_000));
  const written = openTelemetry(writtenPath);
  recordFineCellsFrom(written, SINCE);
  written.close();
  await recordRequests(control, writtenPath, ROWS.slice(0, 5_000));
  await recordRequests(control, writtenPath, ROWS.slice(5_000));
});
afterAll(async () => {
  await control?.close();
  rmSync(scratch, { recursive: true, force: true });
});

async function withStoreAsync<T>(path: string, work: (queries: AnalyticsQueries) => Promise<T>): Promise<T> {
  const db = new BetterSqlite3(path, { readonly: true });
  try {
    return await work(new AnalyticsQueries(new SqliteSql(db)));
  } finally {
    db.close();
  }
}

function withStore<T>(path: string, work: (db: BetterSqlite3.Database) => T): T {
  const db = new BetterSqlite3(path, { readonly: true });
  try {
    return work(db);
  } finally {
    db.close();
  }
}

const fineCellsBefore = (db: BetterSqlite3.Database, at: number) =>
  FINE_TABLES.map((table) => db.prepare(`SELECT COUNT(*) FROM ${table} WHERE bucket < ?`).pluck().get(at) as number);

interface Check {
  name: string;
  query: AnalyticsQuery;
  expect: (answer: any) => void;
}

/** Summaries, timeseries at every grain and dashboards over windows before, across and after the start. */
function checks(): Check[] {
  const list: Check[] = [];
  const add = (query: AnalyticsQuery, expect: Check['expect']) =>
    list.push({ name: `${query.kind} ${JSON.stringify(query)}`, query, expect });
  for (const [name, window] of Object.entries(WINDOWS)) {
    for (const narrowed of SCOPES) {
      const scope: Scope = { orgId: MAIN, ...window, ...narrowed };
      add({ kind: 'summary', scope }, (answer) =>
        expectSummary(answer, keptRows(ROWS, scope, scope.from, scope.to + 1, usageGrains(scope), undefined), name),
      );
      const edges = edgesFrom(scope.from - 37 * MINUTE - 1_234, 5 * HOUR + 150_000, scope);
      const previous = WINDOWS.recent;
      add({ kind: 'dashboard', scope, edges, previous }, (answer) =>
        expect(answer).toEqual(expectedDashboard(ROWS, scope, edges, previous)),
      );
    }
    const series: { narrowed: object; groupBy: GroupBy | null }[] = [
      { narrowed: {}, groupBy: null },
      { narrowed: {}, groupBy: 'model' },
      { narrowed: { keyId: 'k-a' }, groupBy: 'model' },
    ];
    for (const intervalMs of [MINUTE, 5 * MINUTE, HOUR, DAY]) {
      if (intervalMs === MINUTE && name !== 'across') continue;
      for (const { narrowed, groupBy } of series) {
        const scope: Scope = { orgId: MAIN, ...window, ...narrowed };
        for (const metric of ['volume', 'latency', 'tok_s'] as Metric[]) {
          add({ kind: 'timeseries', scope, metric, intervalMs, groupBy }, (answer) =>
            expectSeries(
              answer,
              keptRows(ROWS, scope, scope.from, scope.to + 1, usageGrains(scope, { intervalMs, groupBy }), undefined),
              metric,
              intervalMs,
              groupBy,
              name,
            ),
          );
        }
      }
    }
  }
  return list;
}

async function expectAnswers(path: string): Promise<void> {
  const db = new BetterSqlite3(path, { readonly: true });
  try {
    const queries = new AnalyticsQueries(new SqliteSql(db));
    for (const check of checks()) check.expect(await queries.run(check.query));
  } finally {
    db.close();
  }
}

/** A health window of twelve five-minute cells ending before the start, a key's counts, and the days' reconciliations. */
async function healthAndDays(path: string) {
  const db = new BetterSqlite3(path, { readonly: true });
  try {
    const queries = new AnalyticsQueries(new SqliteSql(db));
    const from = SINCE - 3 * HOUR;
    const health = await queries.run({
      kind: 'health',
      orgId: MAIN,
      from,
      cells: 12,
      to: from + HOUR - 1,
      listedSince: from - DAY,
      providers: { 'svc/fast': 'svc' },
    });
    // Three windows back from NOW, the widest's edge before the start, within an hour.
    const impact = await queries.run({
      kind: 'impact',
      orgId: MAIN,
      keyId: 'k-a',
      now: NOW,
      windowsMs: [HOUR, DAY, NOW - SINCE + 23 * MINUTE + 1_500],
      callersWindowMs: DAY,
      sampleRows: 100,
      topCallers: 5,
      topValues: 3,
    } as const);
    const days = [];
    for (let day = START - (START % DAY); day < NOW; day += DAY) {
      days.push(await queries.run({ kind: 'reconcile_day', orgId: MAIN, day }));
    }
    return { health, impact, days };
  } finally {
    db.close();
  }
}

describe('windows read around the fine cells start', () => {
  it('reads the partial hours before the start from the rows, the whole hours from their cells', () => {
    const from = SINCE - 2 * HOUR - 7 * MINUTE - 500;
    const to = SINCE + HOUR + 11 * MINUTE + 250;
    const parts = segments(from, to, GRAINS, SINCE);
    expect(parts.map((part) => [part.grain?.ms ?? null, part.from, part.to])).toEqual([
      [null, from, SINCE - 2 * HOUR],
      [HOUR, SINCE - 2 * HOUR, SINCE + HOUR],
      [5 * MINUTE, SINCE + HOUR, SINCE + HOUR + 10 * MINUTE],
      [MINUTE, SINCE + HOUR + 10 * MINUTE, SINCE + HOUR + 11 * MINUTE],
      [null, SINCE + HOUR + 11 * MINUTE, to],
    ]);
    // Without the start, the old edge is read from five-minute and minute cells.
    expect(segments(from, to, GRAINS)[0]).toEqual({ grain: null, from, to: from + 500 });
  });
});

describe("an old window's partial hour, read as its cell less the rows outside the window", () => {
  // An hour two days before the start: its fine cells never written.
  const H = SINCE - 2 * DAY + 5 * HOUR;
  const path = join(scratch, 'less.db');
  const row = (n: number, ts: number, keyId: string, generated: number, totalMs: number): RequestRecord => ({
    ...ROWS[0]!,
    req_id: `less-${n}`,
    ts,
    org_id: MAIN,
    project_id: 'p0',
    key_id: keyId,
    status: 200,
    termination_reason: 'completed',
    upstream_error: null,
    ttft_ms: 0.5,
    total_ms: totalMs,
    tokens_generated: generated,
    total_tokens: generated,
    prompt_tokens: 0,
    cache_read_input_tokens: null,
  });
  // Before the window, k-a's generation times sum in no order to what they take away exactly; k-b has no row inside.
  const LESS_ROWS = [
    row(1, H + MINUTE, 'k-a', 10, 0.501),
    row(2, H + 2 * MINUTE, 'k-a', 20, 0.512),
    row(3, H + 3 * MINUTE, 'k-a', 30, 1.529),
    row(4, H + 4 * MINUTE, 'k-b', 40, 0.9),
    // Inside: no token generated, so no speed is known.
    row(5, H + 30 * MINUTE, 'k-a', 0, 0.65),
  ];
  const scope: Scope = { orgId: MAIN, from: H + 10 * MINUTE, to: H + 2 * HOUR - 1 };

  beforeAll(async () => {
    const db = openTelemetry(path);
    recordFineCellsFrom(db, SINCE);
    db.close();
    await recordRequests(control, path, LESS_ROWS);
  });

  it('takes the hour cell less the ten minutes before the window, not fifty minutes of rows', () => {
    const parts = segments(scope.from, scope.to + 1, GRAINS, SINCE);
    expect(parts[0]).toEqual({ grain: null, from: scope.from, to: H + HOUR });
    expect(complemented(parts, GRAINS, { fineFrom: SINCE })[0]).toMatchObject({
      grain: { ms: HOUR },
      from: H,
      to: H + HOUR,
      less: [{ from: H, to: scope.from }],
    });
    // Not the fine cells, which are gone there, nor rows before a horizon.
    expect(complemented(parts, GRAINS, { fineFrom: SINCE, horizon: H + HOUR })[0]).toBe(parts[0]);
  });

  it('answers as the rows: no point for a key with none inside, no speed where no token was generated', async () => {
    // What the test is for: k-a's cell less its rows outside, summed as SQL sums it, leaves a
    // rounding of generation time (the writer's sum of the cell), not 0.
    const left = withStore(path, (db) => {
      const cell = db
        .prepare(`SELECT speed_ms FROM rollup_dim_hour WHERE org_id = ? AND dim = 2 AND bucket = ? AND value = 'k-a'`)
        .pluck()
        .get(MAIN, H) as number;
      const outside = LESS_ROWS.slice(0, 3).map((r) => -(r.total_ms - r.ttft_ms!));
      return db
        .prepare(`SELECT SUM(v) FROM (SELECT ? AS v UNION ALL SELECT ? UNION ALL SELECT ? UNION ALL SELECT ?)`)
        .pluck()
        .get(cell, ...outside) as number;
    });
    expect(left).not.toBe(0);
    await withStoreAsync(path, async (queries) => {
      const series = async (metric: Metric) => {
        const answer = await queries.run({ kind: 'timeseries', scope, metric, intervalMs: HOUR, groupBy: 'key' });
        return JSON.parse(seriesText(answer.json)) as { bucket: string; group: string | null; value: number }[];
      };
      const bucket = new Date(H).toISOString().replace('.000Z', '');
      expect(await series('volume')).toEqual([{ bucket, group: 'k-a', value: 1 }]);
      expect(await series('tok_s')).toEqual([]);
      const [latency] = await series('latency');
      expect(latency!.value).toBeCloseTo(0.65, 9);
      const summary = await queries.run({ kind: 'summary', scope });
      expect(summary).toMatchObject({ requests: 1, totalTokens: 0, tokensPerSecond: null });
      const top = await queries.run({
        kind: 'top',
        scope,
        groupBy: 'key',
        previous: { from: 0, to: 0 },
        trendEdges: [],
      });
      expect(top.map((entry) => [entry.group, entry.requests])).toEqual([['k-a', 1]]);
    });
  });
});

describe('fine cells thinned', () => {
  it('answers as the reference does with every cell kept', async () => {
    await expectAnswers(thinnedPath);
  });

  it('deletes the fine cells before the start an hour of one organisation at a time, and nothing else', async () => {
    const before = await healthAndDays(thinnedPath);
    const digests = withStore(thinnedPath, (db) => rollupDigests(db));
    const kept = withStore(thinnedPath, (db) => fineCellsBefore(db, Number.MAX_SAFE_INTEGER)).map(
      (all, i) => all - withStore(thinnedPath, (db) => fineCellsBefore(db, SINCE))[i]!,
    );
    expect(withStore(thinnedPath, (db) => fineCellsBefore(db, SINCE)).every((n) => n > 0)).toBe(true);

    const db = openTelemetry(thinnedPath);
    let batches = 0;
    try {
      for (let more = true; more; batches++) {
        const done = thinFineCells(db, SINCE);
        more = done.more;
        // Midway, the start is recorded and every read still answers as the reference.
        if (batches === 3) await expectAnswers(thinnedPath);
      }
      expect(fineCellsFrom(db)).toBe(SINCE);
      // Asked again, and with an earlier start, nothing more goes and the start stays.
      expect(thinFineCells(db, SINCE - DAY)).toEqual({ cells: 0, more: false });
      expect(fineCellsFrom(db)).toBe(SINCE);
    } finally {
      db.close();
    }
    // Two organisations, fifteen hours or so before the start each: one batch an hour.
    expect(batches).toBeGreaterThan(20);

    withStore(thinnedPath, (store) => {
      expect(fineCellsBefore(store, SINCE)).toEqual(FINE_TABLES.map(() => 0));
      const all = fineCellsBefore(store, Number.MAX_SAFE_INTEGER);
      expect(all).toEqual(kept);
      const after = rollupDigests(store);
      for (const [table, digest] of Object.entries(digests)) {
        if (!FINE_TABLES.includes(table)) expect(after[table], table).toBe(digest);
      }
    });
    await expectAnswers(thinnedPath);
    const thinned = await healthAndDays(thinnedPath);
    // Provider health reads the dashboard's five-minute cells, which stay.
    expect(thinned.health).toEqual(before.health);
    expect(thinned.health.some((provider) => provider.totals.requests > 0)).toBe(true);
    // The key's counts over a window whose edge is before the start: its edge read from the rows.
    expect(thinned.impact).toEqual(before.impact);
    const edge = NOW - (NOW - SINCE + 23 * MINUTE + 1_500);
    expect(thinned.impact.requests[2]).toBe(
      ROWS.filter((row) => row.org_id === MAIN && row.key_id === 'k-a' && row.ts >= edge).length,
    );
    for (const [i, day] of thinned.days.entries()) {
      expect(day.differences, new Date(day.day).toISOString()).toEqual([]);
      expect({ ...day, cellsChecked: 0 }).toEqual({ ...before.days[i], cellsChecked: 0 });
      // A day before the start is checked against its hourly and daily cells only.
      if (day.day < SINCE) expect(day.cellsChecked).toBeLessThan(before.days[i]!.cellsChecked);
      else expect(day.cellsChecked).toBe(before.days[i]!.cellsChecked);
    }
  });

  it("leaves a search of the request log over its window alone counted from the index's blocks", async () => {
    const db = new BetterSqlite3(writtenPath, { readonly: true });
    const counted = vi.spyOn(SearchIndex.prototype, 'countShared');
    try {
      const queries = new AnalyticsQueries(new SqliteSql(db));
      const filter = { orgId: MAIN, ...WINDOWS.whole, search: 'lahore-health' };
      const page = await queries.run({ kind: 'requests', filter, limit: 50, offset: 0 });
      const expected = ROWS.filter(
        (row) =>
          row.org_id === MAIN && row.ts >= filter.from && row.ts <= filter.to && row.metadata.includes('Lahore-Health'),
      );
      expect(page.total).toBe(expected.length);
      // The start recorded is not a part of the filter: the window's count is the blocks' sum.
      expect(counted).toHaveBeenCalled();
    } finally {
      counted.mockRestore();
      db.close();
    }
  });

  it('never writes the fine cells before a recorded start: the same cells as thinned, the same answers', async () => {
    withStore(writtenPath, (db) => {
      expect(fineCellsBefore(db, SINCE)).toEqual(FINE_TABLES.map(() => 0));
      expect(rollupDigests(db)).toEqual(withStore(thinnedPath, (thinned) => rollupDigests(thinned)));
    });
    await expectAnswers(writtenPath);
  });
});

describe("a server's sweep", () => {
  it('thins the fine cells of the days past their keeping on the writing thread, and says so', async () => {
    const telemetryDbPath = join(scratch, 'server.db');
    const server = await startServer({ now: () => NOW, telemetryDbPath });
    try {
      await recordRequests(server.app.control, telemetryDbPath, ROWS);
      expect(withStore(telemetryDbPath, (db) => fineCellsBefore(db, SINCE)).every((n) => n > 0)).toBe(true);
      await server.app.retention.sweep();
      withStore(telemetryDbPath, (db) => {
        expect(fineCellsFrom(db)).toBe(SINCE);
        expect(fineCellsBefore(db, SINCE)).toEqual(FINE_TABLES.map(() => 0));
        expect(rollupDigests(db)).toEqual(withStore(writtenPath, (written) => rollupDigests(written)));
      });
      const line = server
        .logs()
        .split('\n')
        .find((entry) => entry.includes('old minute and five-minute cells deleted'));
      expect(JSON.parse(line!)).toMatchObject({ before: new Date(SINCE).toISOString(), batches: expect.any(Number) });
    } finally {
      await server.close();
    }
  });
});
