import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3, { type Database } from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { AnalyticsQueries } from '../../server/analytics/queries.js';
import type { RequestFilter } from '../../server/analytics/query-types.js';
import type { Params } from '../../server/analytics/sql.js';
import { SqliteSql } from '../../server/analytics/sqlite-sql.js';
import { recordRequests } from '../../server/ingest/record-requests.js';
import { SqliteControlStore } from '../../server/stores/control/store.js';
import type { RequestRecord } from '../../server/stores/telemetry/request-record.js';
import { openTelemetry } from '../../server/stores/telemetry/store.js';
import { requestRecord, seededRandom } from './request-rows.js';

const scratch = mkdtempSync(join(tmpdir(), 'gc-cost-index-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
const control = SqliteControlStore.open(join(scratch, 'control.db'), { accessSeconds: 60, refreshSeconds: 600 });

const DAY = 86_400_000;
const MIDNIGHT = Date.UTC(2026, 10, 20);

/** Rows of two organisations over four UTC days, a few on each midnight's last and first millisecond. */
function records(): RequestRecord[] {
  const random = seededRandom(54);
  const edges = [-1, 0, DAY - 1, DAY, 2 * DAY - 1, 2 * DAY].map((at) => MIDNIGHT + at);
  return Array.from({ length: 3_000 }, (_, i) => ({
    ...requestRecord(i),
    req_id: `req_${i.toString(16).padStart(8, '0')}`,
    ts: i < 60 ? edges[i % edges.length]! : MIDNIGHT - DAY + Math.floor(random() * 4 * DAY),
    org_id: i % 3 === 0 ? 'org-b' : 'org-a',
    cost_micro: Math.floor(random() * 100_000),
  }));
}

/** The rows of org-a a filter by least cost keeps, in the log's order (newest first, then by id). */
function expected(rows: RequestRecord[], from: number, to: number, least: number): RequestRecord[] {
  return rows
    .filter((r) => r.org_id === 'org-a' && r.ts >= from && r.ts <= to && r.cost_micro >= least)
    .sort((a, b) => b.ts - a.ts || (a.req_id < b.req_id ? 1 : -1));
}

/** The analytics on a store, with the count statements they ran. */
function queriesOn(db: Database): { queries: AnalyticsQueries; counts: { sql: string; params: Params }[] } {
  const counts: { sql: string; params: Params }[] = [];
  const sql = new SqliteSql(db);
  const get = sql.get.bind(sql);
  sql.get = async <R>(text: string, params?: Params) => {
    if (text.startsWith('SELECT COUNT(*)')) counts.push({ sql: text, params: params ?? {} });
    return get<R>(text, params);
  };
  return { queries: new AnalyticsQueries(sql), counts };
}

/** Windows that end and start on midnights, cross one or two, and lie within a day. */
const WINDOWS: [number, number][] = [
  [MIDNIGHT - 1, MIDNIGHT],
  [MIDNIGHT, MIDNIGHT + DAY - 1],
  [MIDNIGHT - DAY / 2, MIDNIGHT + DAY / 2],
  [MIDNIGHT - DAY, MIDNIGHT + 3 * DAY],
  [MIDNIGHT + 3_600_000, MIDNIGHT + 7_200_000],
];

async function pagesMatch(db: Database, rows: RequestRecord[]): Promise<void> {
  const { queries } = queriesOn(db);
  for (const [from, to] of WINDOWS) {
    for (const least of [0, 50_000, 99_000]) {
      const filter: RequestFilter = { orgId: 'org-a', from, to, minCostMicro: least };
      const want = expected(rows, from, to, least);
      const page = await queries.run({ kind: 'requests', filter, limit: 200, offset: 0 });
      expect(page.total, `${from}..${to} from ${least}`).toBe(want.length);
      expect(page.rows.map((r) => r.req_id)).toEqual(want.slice(0, 200).map((r) => r.req_id));
    }
  }
}

describe('the request log filtered by least cost (index by day and cost, 027)', () => {
  const rows = records();

  it('counts and lists every row of a window costing that much, across midnights, through the index by cost', async () => {
    const path = join(scratch, 'new.db');
    await recordRequests(control, path, rows);
    const db = new BetterSqlite3(path, { readonly: true });
    try {
      await pagesMatch(db, rows);
      const { queries, counts } = queriesOn(db);
      const filter = { orgId: 'org-a', from: MIDNIGHT - DAY / 2, to: MIDNIGHT + DAY / 2, minCostMicro: 90_000 };
      await queries.run({ kind: 'requests', filter, limit: 20, offset: 0 });
      expect(counts).toHaveLength(1);
      const plan = db
        .prepare(`EXPLAIN QUERY PLAN ${counts[0]!.sql}`)
        .all(counts[0]!.params)
        .map((step) => (step as { detail: string }).detail);
      // The window's two days looked up for their costly rows (the day an equality, the cost a range
      // after it), not every row of the window, nor of the organisation in the index, read.
      expect(plan.some((step) => /requests_by_cost \(org_code=\? AND <expr>=\? AND cost_micro>\?\)/.test(step))).toBe(
        true,
      );
    } finally {
      db.close();
    }
  });

  it('rebuilds the index of a store made before it, which answers as before', async () => {
    const path = join(scratch, 'old.db');
    await recordRequests(control, path, rows);
    const old = new BetterSqlite3(path);
    old.exec(`DROP INDEX requests_by_cost; CREATE INDEX requests_by_cost ON request_rows (org_code, cost_micro, ts);
      PRAGMA user_version = 26;`);
    old.close();
    const upgrading: string[] = [];
    openTelemetry(path, { upgrading: (file) => upgrading.push(file) }).close();
    expect(upgrading).toEqual(['027_cost_index_by_day.sql']);
    const db = new BetterSqlite3(path, { readonly: true });
    try {
      const index = db.prepare("SELECT sql FROM sqlite_master WHERE name = 'requests_by_cost'").pluck().get();
      expect(index).toContain('ts / 86400000');
      await pagesMatch(db, rows);
    } finally {
      db.close();
    }
  });
});
