import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { PgSql } from '../../server/analytics/postgres-sql.js';
import { AnalyticsQueries } from '../../server/analytics/queries.js';
import type { AnalyticsQuery, RequestFilter, Scope } from '../../server/analytics/query-types.js';
import { recordRequests } from '../../server/ingest/record-requests.js';
import { SqliteControlStore } from '../../server/stores/control/store.js';
import { openPool } from '../../server/stores/postgres.js';
import { PgRequestLog } from '../../server/stores/telemetry/postgres/request-log.js';
import { REQUEST_COLUMNS } from '../../server/stores/telemetry/request-record.js';
import { ROLLUP_TABLES } from '../../server/stores/telemetry/rollup-writer.js';
import { freshDatabase } from '../postgres/database.js';
import {
  edgesFrom,
  expectedDashboard,
  expectPage,
  expectSummary,
  HORIZON,
  HOUR,
  keptRows,
  MAIN,
  MINUTE,
  NOW,
  OTHER,
  retentionRows,
  START,
  traceOf,
  usageGrains,
} from './retention-rows.js';

/**
 * Retention on the request log in PostgreSQL (PgRequestLog.expire): the old rows go in batches,
 * oldest first, the rollups stay as they were, the search's hourly counts before the horizon go
 * with the last batch, and reads with the horizon, and searches from it, answer as before.
 */

vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

const ROWS = [
  ...retentionRows(9_000, { seed: 81, prefix: 'pg-', from: START, to: NOW, mainShare: 0.75 }),
  // At the horizon's edges.
  ...retentionRows(4, { seed: 82, prefix: 'pg-edge-', from: 0, to: 1 }).map((row, i) => ({
    ...row,
    ts: HORIZON + [-MINUTE, -1, 0, 1][i]!,
  })),
];

const WINDOWS = {
  whole: { from: START - HOUR + 17, to: NOW + 5_000 },
  ragged: { from: HORIZON - 30 * HOUR - 7 * MINUTE - 13_500, to: NOW - HOUR + 12_345 },
  near: { from: HORIZON - 17 * MINUTE - 43_250, to: HORIZON + 2 * HOUR + 5_000 },
};

describe('retention on PostgreSQL', () => {
  const folder = mkdtempSync(join(tmpdir(), 'gc-retention-pg-'));
  let database: Awaited<ReturnType<typeof freshDatabase>>;
  let log: PgRequestLog;
  let pool: pg.Pool;
  let client: pg.PoolClient;
  let queries: AnalyticsQueries;

  beforeAll(async () => {
    database = await freshDatabase();
    const control = SqliteControlStore.open(join(folder, 'control.db'), { accessSeconds: 900, refreshSeconds: 3600 });
    log = await PgRequestLog.open(database.url);
    try {
      await recordRequests(control, log, ROWS.slice(0, 5_000));
      await recordRequests(control, log, ROWS.slice(5_000));
    } finally {
      await control.close();
    }
    pool = openPool(database.url);
    client = await pool.connect();
    queries = new AnalyticsQueries(new PgSql(client));
  });
  afterAll(async () => {
    client?.release();
    await pool?.end();
    await log?.close();
    await database?.drop();
    rmSync(folder, { recursive: true, force: true });
  });

  const count = async (where: string, ...params: unknown[]) =>
    Number((await pool.query(`SELECT COUNT(*) AS n FROM requests WHERE ${where}`, params)).rows[0].n);
  const rowsWhere = async (where: string, ...params: unknown[]) =>
    (await pool.query(`SELECT ${REQUEST_COLUMNS.join(', ')} FROM requests WHERE ${where} ORDER BY req_id`, params))
      .rows;
  const rollups = async () => {
    const tables: Record<string, unknown[]> = {};
    for (const table of ROLLUP_TABLES) {
      const order = table.columns.filter((c) => !['latency', 'ttft'].includes(c)).join(', ');
      tables[table.name] = (
        await pool.query(`SELECT ${table.columns.join(', ')} FROM ${table.name} ORDER BY ${order}`)
      ).rows;
    }
    return tables;
  };
  /** An organisation's search counts by hour: those before the horizon, from it, or all. */
  const hours = async (orgId: string, which: 'old' | 'new' | 'all') =>
    (
      await pool.query(
        `SELECT set_id, hour, rows FROM search_hours WHERE org_id = $1
        AND (CASE $2::text WHEN 'old' THEN hour < $3 WHEN 'new' THEN hour >= $3 ELSE TRUE END) ORDER BY set_id, hour`,
        [orgId, which, HORIZON],
      )
    ).rows;

  /** Reads with the horizon, each held to the reference over the rows it keeps. */
  function checks(): { name: string; query: AnalyticsQuery; expect: (answer: any) => void }[] {
    const list: { name: string; query: AnalyticsQuery; expect: (answer: any) => void }[] = [];
    for (const window of Object.values(WINDOWS)) {
      for (const narrowed of [{}, { model: 'svc/fast' }, { projectId: 'p0', model: 'openai/gpt-4o' }]) {
        const scope: Scope = { orgId: MAIN, ...window, ...narrowed, horizon: HORIZON };
        list.push({
          name: `summary ${JSON.stringify(scope)}`,
          query: { kind: 'summary', scope },
          expect: (answer) =>
            expectSummary(
              answer,
              keptRows(ROWS, scope, scope.from, scope.to + 1, usageGrains(scope), HORIZON),
              'summary',
            ),
        });
        const edges = edgesFrom(scope.from - 37 * MINUTE, 5 * HOUR + 150_000, scope);
        const previous = { from: HORIZON - 50 * HOUR + 123, to: HORIZON - 3 * HOUR };
        list.push({
          name: `dashboard ${JSON.stringify(scope)}`,
          query: { kind: 'dashboard', scope, edges, previous },
          expect: (answer) => expect(answer).toEqual(expectedDashboard(ROWS, scope, edges, previous)),
        });
      }
    }
    return list;
  }

  /** The request log's lists and searches, from the horizon (given, or as the window's start). */
  async function expectSearches(withHorizon: boolean): Promise<void> {
    const oldRow = ROWS.find((row) => row.org_id === MAIN && row.ts < HORIZON - HOUR && traceOf(row) !== null)!;
    const keptRow = ROWS.find((row) => row.org_id === MAIN && row.ts > HORIZON + HOUR && traceOf(row) !== null)!;
    for (const search of [
      undefined,
      'lahore',
      'straße',
      'tr-',
      'pg-',
      oldRow.req_id,
      traceOf(oldRow)!,
      keptRow.req_id,
    ]) {
      for (const narrowed of [{}, { model: 'svc/fast' }]) {
        for (const window of [WINDOWS.whole, WINDOWS.ragged, { from: HORIZON, to: NOW }]) {
          const filter: RequestFilter = {
            orgId: MAIN,
            ...(withHorizon ? window : { from: Math.max(window.from, HORIZON), to: window.to }),
            ...narrowed,
            ...(search === undefined ? {} : { search }),
            ...(withHorizon ? { horizon: HORIZON } : {}),
          };
          for (const offset of [0, 37]) {
            expectPage(await queries.run({ kind: 'requests', filter, limit: 50, offset }), ROWS, filter, offset);
          }
        }
      }
    }
    expect(await queries.run({ kind: 'request', orgId: MAIN, reqId: oldRow.req_id, horizon: HORIZON })).toBeNull();
    expect(await queries.run({ kind: 'request', orgId: MAIN, reqId: keptRow.req_id, horizon: HORIZON })).toEqual(
      keptRow,
    );
  }

  it('deletes the old rows in batches, keeps the rollups, drops the old search hours last, and reads stay', async () => {
    const old = ROWS.filter((row) => row.org_id === MAIN && row.ts < HORIZON);
    expect(old.length).toBeGreaterThan(2_500);
    expect(await count('org_id = $1 AND ts < $2', MAIN, HORIZON)).toBe(old.length);
    const list = checks();
    const answers = new Map<string, unknown>();
    for (const check of list) {
      const answer = await queries.run(check.query);
      check.expect(answer);
      answers.set(check.name, answer);
    }
    await expectSearches(true);
    await expectSearches(false);
    const cells = await rollups();
    const kept = await rowsWhere('ts >= $1', HORIZON);
    const others = await rowsWhere('org_id = $1', OTHER);
    const oldHours = await hours(MAIN, 'old');
    const newHours = await hours(MAIN, 'new');
    const otherHours = await hours(OTHER, 'all');
    expect(oldHours.length).toBeGreaterThan(50);

    // The oldest first, no more than asked.
    const oldest = old.map((row) => row.ts).sort((a, b) => a - b);
    expect(await log.expire(MAIN, HORIZON, 1)).toBe(1);
    expect(await count('org_id = $1 AND ts < $2', MAIN, HORIZON)).toBe(old.length - 1);
    expect(await count('org_id = $1 AND ts <= $2', MAIN, oldest[0]!)).toBe(0);
    let deleted = 1;
    let batches = 0;
    for (;;) {
      const rows = await log.expire(MAIN, HORIZON, 500);
      expect(rows).toBeLessThanOrEqual(500);
      deleted += rows;
      batches++;
      expect(await count('org_id = $1 AND ts < $2', MAIN, HORIZON)).toBe(old.length - deleted);
      // The search's counts of the old hours stay until the last batch; reads do not move.
      expect(await hours(MAIN, 'old')).toEqual(rows < 500 ? [] : oldHours);
      for (const check of list) expect(await queries.run(check.query), check.name).toEqual(answers.get(check.name));
      if (rows < 500) break;
    }
    expect(batches).toBeGreaterThan(4);
    expect(deleted).toBe(old.length);
    expect(await count('org_id = $1 AND ts < $2', MAIN, HORIZON)).toBe(0);
    expect(await rowsWhere('ts >= $1', HORIZON)).toEqual(kept);
    expect(await rowsWhere('org_id = $1', OTHER)).toEqual(others);
    expect(await hours(MAIN, 'new')).toEqual(newHours);
    expect(await hours(OTHER, 'all')).toEqual(otherHours);
    expect(await rollups()).toEqual(cells);
    await expectSearches(true);
    await expectSearches(false);
    // With the old rows and their hours gone, a search over the whole log finds exactly the rows left.
    const left = ROWS.filter((row) => row.org_id !== MAIN || row.ts >= HORIZON);
    for (const search of ['lahore', 'tr-', 'pg-00']) {
      const filter: RequestFilter = { orgId: MAIN, ...WINDOWS.whole, search };
      expectPage(await queries.run({ kind: 'requests', filter, limit: 50, offset: 0 }), left, filter, 0);
    }
    expect(await log.expire(MAIN, HORIZON, 500)).toBe(0);
  });
});
