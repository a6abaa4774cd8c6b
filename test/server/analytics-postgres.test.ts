import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { AnalyticsUnavailable } from '../../server/analytics/pool.js';
import { isUnavailable, PgAnalytics } from '../../server/analytics/postgres-analytics.js';
import { PgSql } from '../../server/analytics/postgres-sql.js';
import { AnalyticsQueries } from '../../server/analytics/queries.js';
import type { AnalyticsQuery, GroupBy, Metric, RequestFilter, Scope } from '../../server/analytics/query-types.js';
import { SqliteSql } from '../../server/analytics/sqlite-sql.js';
import { recordRequests } from '../../server/ingest/record-requests.js';
import { SqliteControlStore } from '../../server/stores/control/store.js';
import { openPool } from '../../server/stores/postgres.js';
import { PgRequestLog } from '../../server/stores/telemetry/postgres/request-log.js';
import { freshDatabase } from '../postgres/database.js';
import { VARIED_START as START, variedRecord } from './request-rows.js';
import { seriesText } from './retention-rows.js';

/**
 * Every analytics query answers on PostgreSQL what it answers on SQLite for the same rows. The
 * SQLite answers are held to the reference model by analytics.test.ts and the suites beside it,
 * so this holds PostgreSQL's to it too, query kind by query kind, filter by filter.
 */

vi.setConfig({ testTimeout: 120_000 });

const DAY = 86_400_000;
const HOUR = 3_600_000;
const ORG = 'org-main';
const ROWS = 12_000;

/** The whole three days, a ragged window with edges inside minutes, and a short one. */
const WHOLE: Scope = { orgId: ORG, from: START, to: START + 3 * DAY - 1 };
const RAGGED: Scope = { orgId: ORG, from: START + 5 * HOUR + 17_123, to: START + 2 * DAY + 7 * HOUR + 59_999 };
const SHORT: Scope = { orgId: ORG, from: START + DAY + 1_234, to: START + DAY + 3_000_000 };
const WINDOWS = [WHOLE, RAGGED, SHORT];
const previous = { from: SHORT.from, to: SHORT.to };
const edgesOf = (scope: Scope, step: number) => {
  const edges: number[] = [];
  for (let at = scope.from; at <= scope.to; at += step) edges.push(at);
  return [...edges, scope.to + 1];
};

const scopes = (window: Scope): Scope[] => [
  window,
  { ...window, projectId: 'p1' },
  { ...window, keyId: 'k-a' },
  { ...window, model: 'svc/fast' },
  { ...window, projectId: 'p0', model: 'openai/gpt-4o' },
];

function queries(): { name: string; query: AnalyticsQuery }[] {
  const list: { name: string; query: AnalyticsQuery }[] = [];
  const add = (query: AnalyticsQuery) => list.push({ name: `${query.kind} ${JSON.stringify(query)}`, query });
  for (const window of WINDOWS) {
    for (const scope of scopes(window)) {
      add({ kind: 'summary', scope });
      add({ kind: 'compare', scope, previous });
      add({ kind: 'dashboard', scope, edges: edgesOf(scope, 6 * HOUR + 300_000), previous });
    }
  }
  const metrics: Metric[] = ['volume', 'latency', 'ttft', 'tok_s', 'token_usage'];
  const groups: (GroupBy | null)[] = [null, 'project', 'key', 'model'];
  for (const metric of metrics) {
    for (const groupBy of groups) {
      for (const intervalMs of [300_000, HOUR, DAY])
        add({ kind: 'timeseries', scope: RAGGED, metric, intervalMs, groupBy });
      add({ kind: 'timeseries', scope: { ...SHORT, keyId: 'k-b' }, metric, intervalMs: 60_000, groupBy });
    }
  }
  const filters: Omit<RequestFilter, 'orgId' | 'from' | 'to'>[] = [
    {},
    { model: 'svc/fast' },
    { models: JSON.stringify(['svc/fast', 'anthropic/claude']) },
    { statusClass: 5 },
    { statusClass: 2, keyId: 'k-c' },
    { terminationReason: 'rate_limited', projectId: 'p1' },
    { minCostMicro: 1_500 },
    { search: 'r1' },
    { search: 't-12' },
    { search: 'req-0001' },
    { search: 'trace', model: 'openai/gpt-4o' },
    { search: 'nothing-holds-this' },
    { search: 'σας' },
    { search: 'straße' },
    { search: 'ärger' },
    { search: 'X-İd'.toLowerCase() },
    { search: 'req-ωmega' },
  ];
  for (const filter of filters) {
    for (const offset of [0, 37]) add({ kind: 'requests', filter: { ...RAGGED, ...filter }, limit: 50, offset });
  }
  // PostgreSQL's index: common strings counted by hour (whole hours, the edges read, a window
  // inside one hour), a row found by both halves counted once, short texts the trigrams cannot
  // narrow, other filters beside the search.
  for (const window of WINDOWS) {
    for (const search of ['r1', 'run', 'trace-id', 'r1-only-here', '-1', 'r', '00', '"', '%', '_1']) {
      add({ kind: 'requests', filter: { ...window, search }, limit: 50, offset: 0 });
    }
  }
  add({ kind: 'requests', filter: { ...WHOLE, search: 'r2', keyId: 'k-a' }, limit: 20, offset: 100 });
  add({ kind: 'requests', filter: { ...WHOLE, search: 'r1', statusClass: 2 }, limit: 50, offset: 0 });
  add({ kind: 'requests', filter: { ...WHOLE, orgId: 'org-other' }, limit: 50, offset: 0 });
  add({ kind: 'throttling', orgId: ORG, keyIds: ['k-a', 'k-b', 'k-c', 'k-none'], from: RAGGED.from, to: RAGGED.to });
  for (const groupBy of ['project', 'key', 'model'] as const) {
    for (const scope of [RAGGED, { ...RAGGED, projectId: 'p1' }, { ...RAGGED, keyId: 'k-a' }]) {
      add({ kind: 'top', scope, groupBy, previous, trendEdges: edgesOf(scope, 12 * HOUR) });
    }
  }
  add({
    kind: 'burn',
    orgId: ORG,
    days: [0, 1, 2].map((d) => ({ from: START + d * DAY, to: START + (d + 1) * DAY - 1 })),
  });
  add({
    kind: 'impact',
    orgId: ORG,
    keyId: 'k-a',
    now: START + 3 * DAY,
    windowsMs: [HOUR, DAY, 7 * DAY],
    callersWindowMs: DAY,
    sampleRows: 50,
    topCallers: 3,
    topValues: 2,
  });
  add({ kind: 'request', orgId: ORG, reqId: 'req-000124' });
  add({ kind: 'request', orgId: 'org-other', reqId: 'req-000124' });
  for (const day of [START, START + DAY]) {
    add({ kind: 'reconcile_day', orgId: ORG, day });
    add({ kind: 'reconcile_day', orgId: ORG, day, projectId: 'p1' });
  }
  add({ kind: 'reconcile_spend', orgId: ORG, keyIds: null });
  add({ kind: 'reconcile_spend', orgId: ORG, keyIds: ['k-a'] });
  add({
    kind: 'health',
    orgId: ORG,
    from: START + DAY,
    cells: 288,
    to: START + 2 * DAY - 1,
    listedSince: START,
    providers: { 'openai/gpt-4o': 'openai', 'svc/fast': 'svc' },
  });
  // Narrowed to a target (variedRecord's rows that succeeded): read from the rows on both stores.
  const targeted: Scope = { ...RAGGED, servedBy: 'prov/model-2026' };
  add({ kind: 'summary', scope: targeted });
  add({ kind: 'compare', scope: targeted, previous });
  add({ kind: 'dashboard', scope: targeted, edges: edgesOf(targeted, 6 * HOUR + 300_000), previous });
  for (const groupBy of [null, 'model'] as const)
    add({ kind: 'timeseries', scope: targeted, metric: 'latency', intervalMs: HOUR, groupBy });
  add({ kind: 'top', scope: targeted, groupBy: 'key', previous, trendEdges: edgesOf(targeted, 12 * HOUR) });
  add({ kind: 'requests', filter: { ...targeted, statusClass: 2 }, limit: 50, offset: 0 });
  add({
    kind: 'health',
    orgId: ORG,
    from: START + DAY,
    cells: 288,
    to: START + 2 * DAY - 1,
    listedSince: START,
    providers: { 'openai/gpt-4o': 'openai', 'svc/fast': 'svc' },
    servedBy: 'prov/model-2026',
  });
  // Narrowed to an API (variedRecord's rows vary it, a twelfth unknown), and grouped by it: read
  // from the rows on both stores, the rows of an unknown API the null group.
  const byApi: Scope = { ...RAGGED, api: 'messages' };
  add({ kind: 'summary', scope: byApi });
  add({ kind: 'compare', scope: { ...byApi, keyId: 'k-a' }, previous });
  add({ kind: 'dashboard', scope: byApi, edges: edgesOf(byApi, 6 * HOUR + 300_000), previous });
  for (const groupBy of [null, 'model', 'api'] as const)
    add({ kind: 'timeseries', scope: byApi, metric: 'latency', intervalMs: HOUR, groupBy });
  for (const scope of [RAGGED, { ...RAGGED, keyId: 'k-b' }, { ...targeted, api: 'chat' as const }]) {
    for (const metric of ['volume', 'tok_s'] as const)
      add({ kind: 'timeseries', scope, metric, intervalMs: HOUR, groupBy: 'api' });
    add({ kind: 'top', scope, groupBy: 'api', previous, trendEdges: edgesOf(scope, 12 * HOUR) });
  }
  add({ kind: 'top', scope: byApi, groupBy: 'model', previous, trendEdges: edgesOf(byApi, 12 * HOUR) });
  add({ kind: 'requests', filter: { ...byApi, statusClass: 2 }, limit: 50, offset: 0 });
  add({ kind: 'requests', filter: { ...WHOLE, api: 'embeddings', search: 'r1' }, limit: 50, offset: 0 });
  add({
    kind: 'health',
    orgId: ORG,
    from: START + DAY,
    cells: 288,
    to: START + 2 * DAY - 1,
    listedSince: START,
    providers: { 'openai/gpt-4o': 'openai', 'svc/fast': 'svc' },
    api: 'chat',
  });
  return list;
}

/** Timeseries points compared as the numbers they are: SQLite writes 5.0 where PostgreSQL writes 5 (and hands bytes, not text). */
function comparable(result: unknown): unknown {
  if (
    result &&
    typeof result === 'object' &&
    'json' in result &&
    (typeof result.json === 'string' || result.json instanceof Uint8Array)
  ) {
    return { ...result, json: JSON.parse(seriesText(result.json)) as unknown };
  }
  return result;
}

describe('the analytics on PostgreSQL', () => {
  const folder = mkdtempSync(join(tmpdir(), 'gc-analytics-pg-'));
  let database: Awaited<ReturnType<typeof freshDatabase>>;
  let pool: pg.Pool;
  let client: pg.PoolClient;
  let sqlite: BetterSqlite3.Database;
  let onSqlite: AnalyticsQueries;
  let onPostgres: AnalyticsQueries;

  beforeAll(async () => {
    database = await freshDatabase();
    const control = SqliteControlStore.open(join(folder, 'control.db'), { accessSeconds: 900, refreshSeconds: 3600 });
    const log = await PgRequestLog.open(database.url);
    try {
      const rows = Array.from({ length: ROWS }, (_, i) => variedRecord(i));
      // Capitals of other scripts, which only a Unicode casefold finds by a lower-case text.
      rows[4_001] = { ...rows[4_001]!, metadata: JSON.stringify({ city: 'ΣΑΣ Straße', 'X-İd': 'Ärger' }) };
      rows[7_778] = { ...rows[7_778]!, req_id: 'REQ-ΩMEGA-7778' };
      // A common string and a rare one holding the same text, in one row.
      rows[4_005] = { ...rows[4_005]!, metadata: JSON.stringify({ run: 'r1', 'trace-id': 'r1-only-here' }) };
      for (let at = 0; at < ROWS; at += 4_000) {
        await recordRequests(control, join(folder, 'telemetry.db'), rows.slice(at, at + 4_000));
        await recordRequests(control, log, rows.slice(at, at + 4_000));
      }
    } finally {
      await log.close();
      await control.close();
    }
    sqlite = new BetterSqlite3(join(folder, 'telemetry.db'), { readonly: true });
    onSqlite = new AnalyticsQueries(new SqliteSql(sqlite));
    pool = openPool(database.url);
    client = await pool.connect();
    onPostgres = new AnalyticsQueries(new PgSql(client));
  });
  afterAll(async () => {
    client?.release();
    await pool?.end();
    sqlite?.close();
    await database?.drop();
    rmSync(folder, { recursive: true, force: true });
  });

  it.each(queries())('answers $name as SQLite does', async ({ query }) => {
    const expected = comparable(await onSqlite.run(query));
    expect(comparable(await onPostgres.run(query))).toEqual(expected);
  });

  it('answers unavailable, never wrong, when the database cannot answer in time or at all', async () => {
    const summary = { kind: 'summary', scope: WHOLE } as const;
    const limits = { size: 1, timeoutMs: 10_000, maxQueued: 4 };
    const working = PgAnalytics.open(database.url, limits);
    const late = PgAnalytics.open(database.url, { ...limits, timeoutMs: 1 });
    const missing = new URL(database.url);
    missing.pathname = '/no_such_database';
    const absent = PgAnalytics.open(missing.toString(), limits);
    try {
      expect((await working.run(summary)).requests).toBe((await onSqlite.run(summary)).requests);
      await expect(
        late.run({ kind: 'dashboard', scope: WHOLE, edges: edgesOf(WHOLE, HOUR), previous }),
      ).rejects.toThrow(AnalyticsUnavailable);
      await expect(absent.run(summary)).rejects.toThrow(AnalyticsUnavailable);
      const gone = new AbortController();
      gone.abort();
      await expect(working.run(summary, gone.signal)).rejects.toThrow(AnalyticsUnavailable);
    } finally {
      await Promise.all([working.close(), late.close(), absent.close()]);
    }
  });

  it('fails a query the database refuses as a query (500), not as unavailable (503)', async () => {
    // A database without the request log's tables: the query is wrong for it, the database is fine.
    const bare = await freshDatabase();
    const analytics = PgAnalytics.open(bare.url, { size: 1, timeoutMs: 10_000, maxQueued: 4 });
    try {
      const refused = await analytics.run({ kind: 'summary', scope: WHOLE }).catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(Error);
      expect(refused).not.toBeInstanceOf(AnalyticsUnavailable);
    } finally {
      await analytics.close();
      await bare.drop();
    }
  });

  it('tells an unreachable database (503) from a refused query (500) by the error itself', () => {
    const refused = (code: string) => Object.assign(new pg.DatabaseError('refused', 0, 'error'), { code });
    expect(isUnavailable(refused('57014'))).toBe(true); // a statement past its timeout
    expect(isUnavailable(refused('08006'))).toBe(true); // the connection failed
    expect(isUnavailable(refused('53300'))).toBe(true); // too many connections
    expect(isUnavailable(refused('42P01'))).toBe(false); // no such table
    expect(isUnavailable(refused('22P02'))).toBe(false); // bad input
    expect(isUnavailable(Object.assign(new Error('connect ECONNREFUSED'), { syscall: 'connect' }))).toBe(true);
    expect(isUnavailable(new Error('Connection terminated unexpectedly'))).toBe(true);
    expect(isUnavailable(new TypeError("Cannot read properties of undefined (reading 'n')"))).toBe(false);
    expect(isUnavailable(new Error('the query has no value for @orgId'))).toBe(false);
  });

  it('finds rows and figures in these windows, so the comparisons above compare something', async () => {
    const summary = await onSqlite.run({ kind: 'summary', scope: RAGGED });
    expect(summary.requests).toBeGreaterThan(5_000);
    const searched = await onSqlite.run({
      kind: 'requests',
      filter: { ...RAGGED, search: 't-12' },
      limit: 50,
      offset: 0,
    });
    // The second page asked above (offset 37) has rows too.
    expect(searched.total).toBeGreaterThan(37);
    for (const search of ['σας', 'ärger', 'req-ωmega', 'r1-only-here']) {
      const found = await onSqlite.run({ kind: 'requests', filter: { ...WHOLE, search }, limit: 50, offset: 0 });
      expect(found.total, search).toBe(1);
    }
    const health = await onSqlite.run(queries().find((q) => q.query.kind === 'health')!.query);
    expect(JSON.stringify(health)).toContain('p95');
  });
});
