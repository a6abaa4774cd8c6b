import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3, { type Database } from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { AnalyticsQueries } from '../../server/analytics/queries.js';
import type { AnalyticsQuery } from '../../server/analytics/query-types.js';
import { SqliteSql } from '../../server/analytics/sqlite-sql.js';
import { RepeatedRequest, recordRequests } from '../../server/ingest/record-requests.js';
import { SqliteControlStore } from '../../server/stores/control/store.js';
import { REQUEST_COLUMNS, type RequestRecord } from '../../server/stores/telemetry/request-record.js';
import { openTelemetry } from '../../server/stores/telemetry/store.js';
import { termText } from '../../server/stores/telemetry/search-terms.js';
import { requestRecord, seededRandom, uncodeRequests } from './request-rows.js';

const scratch = mkdtempSync(join(tmpdir(), 'gc-coded-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const control = SqliteControlStore.open(join(scratch, 'control.db'), { accessSeconds: 60, refreshSeconds: 600 });

const ORGS = [randomUUID(), randomUUID()];
const KEYS = Array.from({ length: 6 }, () => randomUUID());
const PROJECTS = [randomUUID(), randomUUID(), null];
const T0 = Date.UTC(2026, 10, 1);

/** Rows of two organisations whose coded columns take every kind of value, nulls included. */
function records(count: number, seed: number): RequestRecord[] {
  const random = seededRandom(seed);
  const pick = <T>(values: readonly T[]) => values[Math.floor(random() * values.length)]!;
  const time = seededRandom(seed + 1_000);
  return Array.from({ length: count }, (_, i) => ({
    ...requestRecord(i),
    // A third of the ids and trace ids of hex digits, stored as bytes by 017: the rest as text.
    req_id:
      i % 3 === 0
        ? `req_${seed.toString(16).padStart(4, '0')}${i.toString(16).padStart(8, '0')}`
        : `req_${seed}_${i.toString(16).padStart(8, '0')}`,
    ts: T0 + Math.floor(random() * 86_400_000),
    org_id: pick(ORGS),
    project_id: pick(PROJECTS),
    key_id: pick([...KEYS, null]),
    model: pick(['openai/gpt-4o-mini', 'anthropic/claude-sonnet-4', 'svc/auto']),
    status: pick([200, 200, 429, 502]),
    cost_micro: Math.floor(random() * 50_000),
    // Timings of whole microseconds, stored as integers by 018, and a quarter of every other kind.
    total_ms: i % 4 === 0 ? time() * 5_000 : Math.round(time() * 5e6) / 1000,
    ttft_ms: i % 2 === 0 ? null : Math.round(time() * 10_000) / 10,
    tpot_ms: i % 3 === 0 ? time() : i % 3 === 1 ? null : Math.round(time() * 100),
    pre_dispatch_ms: Math.round(time() * 100) / 10,
    termination_reason: pick(['success', 'client_disconnect', 'upstream_stream_aborted']),
    upstream_error: pick([null, 'upstream 502', 'reset']),
    upstream_model: pick([null, 'gpt-4o-mini-2024-07-18']),
    served_by: pick([null, 'openai/gpt-4o-mini', 'azure/gpt-4o-mini']),
    api: pick([null, 'chat', 'messages', 'responses']),
    user_agent: pick(['openai-node/5.1', 'claude-cli/2.0', 'curl/8.5']),
    metadata: JSON.stringify({
      customer: pick(['acme', 'globex']),
      // A third of the trace ids of 32 hex digits (the metadata then coded by its shape, 019).
      trace_id:
        i % 3 === 0
          ? `${seed.toString(16).padStart(4, '0')}ab${i.toString(16).padStart(26, '0')}`
          : `trace-${seed}-${i}`,
    }),
  }));
}

/** Every row as the log reads it, with its rowid. */
const storedRows = (db: Database) =>
  db.prepare(`SELECT rowid, ${REQUEST_COLUMNS.join(', ')} FROM requests ORDER BY rowid`).all();

/** The timings as stored, with their types (018: whole microseconds as integers). */
const storedTimings = (db: Database) =>
  db
    .prepare(
      `SELECT id, total_ms, typeof(total_ms) AS t, ttft_ms, typeof(ttft_ms) AS f, tpot_ms, typeof(tpot_ms) AS p,
        pre_dispatch_ms, typeof(pre_dispatch_ms) AS d FROM request_rows ORDER BY id`,
    )
    .all();

/** Every search term with its organisation's id. */
/** The terms with their texts: a writer reads a trace id from its row only once its metadata's shape is coded, the migration for every row of a shape. */
const storedTerms = (db: Database) =>
  db
    .prepare(
      `SELECT t.id, s.text AS org_id, ${termText('t.text', 't.row')} AS text, t.row, t.shared
      FROM search_terms t JOIN request_strings s ON s.code = t.org_code ORDER BY t.id`,
    )
    .all();

/** Pages of the request rows and their indexes, as SQLite's dbstat counts them. */
const requestPages = (db: Database) =>
  db
    .prepare(
      `SELECT COUNT(*) FROM dbstat WHERE name IN ('requests', 'request_rows', 'request_strings')
        OR name LIKE 'requests_by_%' OR name LIKE 'sqlite_autoindex_request%'`,
    )
    .pluck()
    .get() as number;

const termPages = (db: Database) =>
  db.prepare("SELECT COUNT(*) FROM dbstat WHERE name = 'search_terms'").pluck().get() as number;

/** Answers a user reads from the log: pages of it filtered and searched, a summary, a chart by key. */
async function answers(path: string): Promise<unknown[]> {
  const db = new BetterSqlite3(path, { readonly: true });
  try {
    const queries = new AnalyticsQueries(new SqliteSql(db));
    const scope = { orgId: ORGS[0]!, from: T0, to: T0 + 86_400_000 };
    const asked: AnalyticsQuery[] = [
      { kind: 'requests', filter: scope, limit: 50, offset: 100 },
      { kind: 'requests', filter: { ...scope, keyId: KEYS[1]!, minCostMicro: 20_000 }, limit: 20, offset: 0 },
      { kind: 'requests', filter: { ...scope, projectId: PROJECTS[0]!, model: 'svc/auto' }, limit: 20, offset: 0 },
      { kind: 'requests', filter: { ...scope, search: 'globex' }, limit: 20, offset: 5 },
      { kind: 'requests', filter: { ...scope, search: `trace-1-1` }, limit: 20, offset: 0 },
      // Request ids and trace ids packed in their terms.
      { kind: 'requests', filter: { ...scope, search: 'req_0001000001' }, limit: 20, offset: 0 },
      { kind: 'requests', filter: { ...scope, search: '1ab00000' }, limit: 20, offset: 3 },
      // Too short for the index: the rows' metadata is read, trace ids put back in their shapes.
      { kind: 'requests', filter: { ...scope, search: '1ab' }, limit: 20, offset: 0 },
      { kind: 'summary', scope: { ...scope, keyId: KEYS[2]! } },
      { kind: 'timeseries', scope, metric: 'volume', intervalMs: 3_600_000, groupBy: 'key' },
      {
        kind: 'timeseries',
        scope: { ...scope, servedBy: 'azure/gpt-4o-mini' },
        metric: 'volume',
        intervalMs: 3_600_000,
        groupBy: 'api',
      },
    ];
    return await Promise.all(asked.map((query) => queries.run(query)));
  } finally {
    db.close();
  }
}

describe('the request log and its search terms coded', () => {
  it('converts an existing store with every row, rowid, term and answer as it was, in fewer pages', async () => {
    const path = join(scratch, 'converted.db');
    await recordRequests(control, path, records(4_000, 1));
    // As the writer made them: the answers of the same rows converted must be these.
    const before = await answers(path);
    expect(JSON.stringify(before)).toContain('"req_1_');
    // The searches of packed terms find rows: their answers compared below are not empty.
    expect(JSON.stringify(before)).toContain('"req_00010000001');
    expect(JSON.stringify(before)).toContain('1ab00000');
    const coded = openTelemetry(path);
    const rows = storedRows(coded);
    // The log reads back each row's metadata as written, shaped (019) or not.
    expect(rows.map((row) => (row as RequestRecord).metadata)).toEqual(records(4_000, 1).map((r) => r.metadata));
    const terms = storedTerms(coded);
    const timings = storedTimings(coded);
    const codedPages = requestPages(coded);
    const codedTermPages = termPages(coded);
    uncodeRequests(coded);
    coded.pragma('user_version = 14');
    const textPages = requestPages(coded);
    const textTermPages = termPages(coded);
    expect(storedRows(coded)).toEqual(rows);
    // As stores before 024 held them: a third of the rows' request ids and trace ids of hex digits, terms too.
    const oldTerms = coded.prepare('SELECT COUNT(*) FROM search_terms').pluck().get() as number;
    expect(oldTerms).toBe(terms.length + 2 * Math.ceil(4_000 / 3));
    coded.close();

    const upgraded = openTelemetry(path);
    expect(upgraded.pragma('user_version', { simple: true })).toBe(27);
    expect(storedRows(upgraded)).toEqual(rows);
    // The rows' own texts are no terms (024), but the newest, which keeps the terms' numbering going.
    const upgradedTerms = storedTerms(upgraded);
    expect(upgradedTerms.slice(0, -1)).toEqual(terms);
    expect(upgradedTerms.at(-1)).toMatchObject({ id: oldTerms, text: expect.stringMatching(/^[0-9a-f]{32}$/) });
    // The migration stores each timing as the writer does, the value and its type.
    expect(storedTimings(upgraded)).toEqual(timings);
    const whole = upgraded
      .prepare("SELECT COUNT(*) FROM request_rows WHERE typeof(total_ms) = 'integer'")
      .pluck()
      .get();
    expect(whole).toBe(3_000);
    const idBytes = upgraded.prepare("SELECT COUNT(*) FROM request_rows WHERE typeof(req_id) = 'blob'").pluck().get();
    expect(idBytes).toBe(Math.ceil(4_000 / 3));
    // Each distinct string once, whichever column it came from.
    const strings = upgraded.prepare('SELECT COUNT(*) FROM request_strings').pluck().get();
    // Besides, the metadata shapes two rows or more hold (019): a customer's, with its trace id set aside.
    const shapes = upgraded
      .prepare("SELECT COUNT(DISTINCT metadata) FROM request_rows WHERE typeof(metadata) = 'integer'")
      .pluck()
      .get() as number;
    expect(shapes).toBe(2);
    const shaped = upgraded.prepare("SELECT COUNT(*) FROM request_rows WHERE typeof(metadata) = 'integer'").pluck();
    expect(shaped.get()).toBe(Math.ceil(4_000 / 3));
    expect(strings).toBe(new Set(rows.flatMap((row) => codedValues(row as RequestRecord))).size + shapes);
    // The store that SQLite makes for the upgraded rows and the one a writer makes agree.
    expect(requestPages(upgraded)).toBeLessThan(textPages * 0.75);
    expect(Math.abs(requestPages(upgraded) - codedPages)).toBeLessThan(codedPages * 0.1);
    expect(termPages(upgraded)).toBeLessThan(textTermPages * 0.75);
    expect(Math.abs(termPages(upgraded) - codedTermPages)).toBeLessThan(codedTermPages * 0.1);
    upgraded.close();
    expect(await answers(path)).toEqual(before);

    // Rows written after the upgrade join those before it; a repeated request id is still refused.
    await recordRequests(control, path, records(500, 2));
    await expect(recordRequests(control, path, records(1, 1))).rejects.toBeInstanceOf(RepeatedRequest);
    const after = new BetterSqlite3(path, { readonly: true });
    expect(after.prepare('SELECT COUNT(*) FROM requests').pluck().get()).toBe(4_500);
    after.close();
  });

  it('keeps every row, term and answer through a VACUUM, which gives back the pages a conversion freed', async () => {
    const path = join(scratch, 'vacuumed.db');
    await recordRequests(control, path, records(3_000, 4));
    const db = openTelemetry(path);
    uncodeRequests(db);
    db.pragma('user_version = 14');
    db.close();
    const converted = openTelemetry(path);
    const rows = storedRows(converted);
    const terms = storedTerms(converted);
    const freed = converted.pragma('freelist_count', { simple: true }) as number;
    expect(freed).toBeGreaterThan(0);
    converted.close();
    const before = await answers(path);

    const vacuumed = openTelemetry(path);
    vacuumed.exec('VACUUM');
    expect(vacuumed.pragma('freelist_count', { simple: true })).toBe(0);
    expect(storedRows(vacuumed)).toEqual(rows);
    expect(storedTerms(vacuumed)).toEqual(terms);
    vacuumed.close();
    expect(await answers(path)).toEqual(before);
    // Rows written after it are numbered on and found by the search as the old ones are.
    await recordRequests(control, path, records(10, 5));
    const reader = new BetterSqlite3(path, { readonly: true });
    const found = await new AnalyticsQueries(new SqliteSql(reader)).run({
      kind: 'requests',
      filter: { orgId: records(10, 5)[4]!.org_id, from: T0, to: T0 + 86_400_000, search: 'trace-5-4' },
      limit: 10,
      offset: 0,
    });
    reader.close();
    expect((found as { rows: RequestRecord[] }).rows.map((row) => row.req_id)).toEqual([records(10, 5)[4]!.req_id]);
  });

  it('takes a row written by hand in SQL into its codes, each string stored once', () => {
    const db = openTelemetry(join(scratch, 'by-hand.db'));
    const insert = db.prepare(
      `INSERT INTO requests (${REQUEST_COLUMNS.join(', ')}) VALUES (${REQUEST_COLUMNS.map((c) => '@' + c).join(', ')})`,
    );
    const [first, second] = records(2, 3).map((record) => ({ ...record, org_id: ORGS[0]!, user_agent: 'same/1' }));
    insert.run(first);
    insert.run({ ...second, project_id: null, key_id: null });
    const [a, b] = storedRows(db) as RequestRecord[];
    expect(a).toMatchObject(first!);
    expect(b).toMatchObject({ ...second, project_id: null, key_id: null });
    const strings = db.prepare('SELECT text FROM request_strings WHERE text IN (?, ?)').pluck().all(ORGS[0], 'same/1');
    expect(strings).toHaveLength(2);
    expect(() => insert.run(first)).toThrow(/UNIQUE constraint failed: request_rows.req_id/);
    db.close();
  });
});

const codedValues = (row: RequestRecord): string[] =>
  [
    row.org_id,
    row.project_id,
    row.key_id,
    row.model,
    row.termination_reason,
    row.upstream_error,
    row.upstream_model,
    row.served_by,
    row.api,
    row.user_agent,
  ].filter((value): value is string => value !== null);
