import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { AnalyticsQueries } from '../../server/analytics/queries.js';
import type { RequestPage, SummaryResult } from '../../server/analytics/query-types.js';
import { SqliteSql } from '../../server/analytics/sqlite-sql.js';
import { recordRequests } from '../../server/ingest/record-requests.js';
import { SqliteControlStore } from '../../server/stores/control/store.js';
import { REQUEST_COLUMNS, type RequestRecord } from '../../server/stores/telemetry/request-record.js';
import { openTelemetry } from '../../server/stores/telemetry/store.js';
import { requestRecord } from './request-rows.js';

const scratch = mkdtempSync(join(tmpdir(), 'gc-compact-rows-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const control = SqliteControlStore.open(join(scratch, 'control.db'), { accessSeconds: 60, refreshSeconds: 600 });

const T0 = Date.UTC(2026, 10, 2);

/** Times a store must give back to the bit, and how each is stored: whole microseconds as integers. */
const TIMES: [ms: number, stored: 'integer' | 'real'][] = [
  [0, 'integer'],
  [1, 'integer'],
  [1604.6, 'integer'],
  [0.001, 'integer'],
  [123_456.789, 'integer'],
  [8_999_999_999.999, 'integer'],
  // Not a whole number of microseconds.
  [0.0005, 'real'],
  [1 / 3, 'real'],
  [1604.600_000_000_1, 'real'],
  // As differences of performance.now() give it.
  [1604.123_456_789, 'real'],
  // Past 9e12 ms a microsecond count is no longer exact: kept as the double it is.
  [1e13, 'real'],
  [1e16, 'real'],
  [Number.MAX_VALUE, 'real'],
  [5e-324, 'real'],
];

const rows = (prefix: string): RequestRecord[] =>
  TIMES.map(([ms], i) => ({
    ...requestRecord(i),
    req_id: `${prefix}-${i}`,
    ts: T0 + i,
    total_ms: ms,
    ttft_ms: i % 2 === 0 ? ms : null,
    tpot_ms: ms,
    pre_dispatch_ms: ms,
  }));

describe('request timings stored in whole microseconds', () => {
  it('gives back every time to the bit, stored as an integer exactly when it is whole microseconds', async () => {
    const path = join(scratch, 'timings.db');
    const written = rows('w');
    await recordRequests(control, path, written);
    const db = openTelemetry(path);
    try {
      // The same times written by hand through the view's trigger are stored alike.
      const byHand = rows('h').map((row) => ({ ...row, ts: row.ts + 1_000 }));
      const insert = db.prepare(
        `INSERT INTO requests (${REQUEST_COLUMNS.join(', ')}) VALUES (${REQUEST_COLUMNS.map((c) => `@${c}`).join(', ')})`,
      );
      for (const row of byHand) insert.run(row);

      const read = db
        .prepare(`SELECT ${REQUEST_COLUMNS.join(', ')} FROM requests ORDER BY ts`)
        .all() as RequestRecord[];
      expect(read).toEqual([...written, ...byHand]);
      for (const [i, row] of read.entries()) {
        // toEqual takes 0 and -0 alike, and rounds nothing: the exact double each time.
        expect(Object.is(row.total_ms, TIMES[i % TIMES.length]![0])).toBe(true);
      }
      const types = db
        .prepare(
          `SELECT typeof(total_ms) AS total, typeof(ttft_ms) AS ttft, typeof(tpot_ms) AS tpot,
            typeof(pre_dispatch_ms) AS pre FROM request_rows ORDER BY ts`,
        )
        .all() as { total: string; ttft: string; tpot: string; pre: string }[];
      expect(types).toEqual(
        [...TIMES, ...TIMES].map(([, stored], i) => ({
          total: stored,
          ttft: (i % TIMES.length) % 2 === 0 ? stored : 'null',
          tpot: stored,
          pre: stored,
        })),
      );
    } finally {
      db.close();
    }
  });

  it('answers a page and a summary read from such rows with the times as written', async () => {
    const path = join(scratch, 'answers.db');
    // Ten times a store holds as integers and as reals, in less than a minute: read from the rows.
    const written = rows('a').slice(0, 10);
    await recordRequests(control, path, written);
    const db = openTelemetry(path);
    try {
      const queries = new AnalyticsQueries(new SqliteSql(db));
      const scope = { orgId: written[0]!.org_id, from: T0, to: T0 + 30_000 };
      const page = (await queries.run({ kind: 'requests', filter: scope, limit: 50, offset: 0 })) as RequestPage;
      expect(page.rows.map((row) => row.total_ms).reverse()).toEqual(written.map((row) => row.total_ms));
      const summary = (await queries.run({ kind: 'summary', scope })) as SummaryResult;
      expect(summary.requests).toBe(10);
      const mean = written.reduce((sum, row) => sum + row.total_ms, 0) / 10;
      expect(summary.avgTotalMs).toBeCloseTo(mean, 6);
    } finally {
      db.close();
    }
  });
});

describe('statuses and total tokens stored as their differences', () => {
  /** A status and tokens (prompt, generated, cache read, total), and the total as stored (025). */
  const CASES: [status: number, prompt: number | null, generated: number, cacheRead: number | null, total: number][] = [
    [200, 100, 50, null, 150],
    [200, 100, 50, 30, 180],
    [200, null, 50, null, 50],
    // A total of another sum: the difference is stored, whatever its sign.
    [429, 100, 0, 20, 100],
    [502, 7, 3, 0, 1_000_000],
    [100, 0, 0, null, 0],
    [599, 2 ** 40, 1, 2 ** 41, 2 ** 42],
  ];
  const rowsOf = (prefix: string, at: number): RequestRecord[] =>
    CASES.map(([status, prompt, generated, cacheRead, total], i) => ({
      ...requestRecord(i),
      req_id: `${prefix}-${i}`,
      ts: at + i,
      status,
      prompt_tokens: prompt,
      tokens_generated: generated,
      cache_read_input_tokens: cacheRead,
      total_tokens: total,
    }));

  it('reads back every status and total as written, a 200 and a total of its parts stored as 0', async () => {
    const path = join(scratch, 'offsets.db');
    const written = rowsOf('w', T0);
    await recordRequests(control, path, written);
    const db = openTelemetry(path);
    try {
      // The same rows written by hand through the view's trigger are stored alike.
      const byHand = rowsOf('h', T0 + 1_000);
      const insert = db.prepare(
        `INSERT INTO requests (${REQUEST_COLUMNS.join(', ')}) VALUES (${REQUEST_COLUMNS.map((c) => `@${c}`).join(', ')})`,
      );
      for (const row of byHand) insert.run(row);
      const read = db.prepare(`SELECT ${REQUEST_COLUMNS.join(', ')} FROM requests ORDER BY ts`).all();
      expect(read).toEqual([...written, ...byHand]);
      const stored = db.prepare('SELECT status, total_tokens FROM request_rows ORDER BY ts').raw().all();
      const expected = CASES.map(([status, prompt, generated, cacheRead, total]) => [
        status - 200,
        total - ((prompt ?? 0) + generated + (cacheRead ?? 0)),
      ]);
      expect(stored).toEqual([...expected, ...expected]);
      // The first three: a 200 whose total is its parts, both stored as 0 (SQLite keeps a 0 as its type alone).
      expect(stored.slice(0, 3)).toEqual([
        [0, 0],
        [0, 0],
        [0, 0],
      ]);
      const queries = new AnalyticsQueries(new SqliteSql(db));
      const scope = { orgId: written[0]!.org_id, from: T0, to: T0 + 30_000 };
      const page = (await queries.run({ kind: 'requests', filter: scope, limit: 50, offset: 0 })) as RequestPage;
      expect(page.rows.map((row) => [row.status, row.total_tokens]).reverse()).toEqual(
        [...written, ...byHand].map((row) => [row.status, row.total_tokens]),
      );
      const errors = { ...scope, statusClass: 5 };
      const failed = (await queries.run({ kind: 'requests', filter: errors, limit: 50, offset: 0 })) as RequestPage;
      expect(failed.total).toBe(4);
    } finally {
      db.close();
    }
  });
});

/** Metadata a store must give back to the byte, and whether its shape can be coded (019). */
const TRACE = '6ba4dbedd789d2682fbd06c1ef4d445f';
const METADATA: [text: string, shaped: boolean][] = [
  [`{"customer":"acme-retail","feature":"translate","trace_id":"${TRACE}"}`, true],
  ['{}', true],
  [`{"trace_id":"${TRACE.slice(0, 16)}","customer":"ravi-foods"}`, true],
  // Two hex values: the first is set aside, the second stays in the shape.
  [`{"a":"${TRACE}","b":"${TRACE}"}`, true],
  // A key of hex digits is set aside as well as a value would be.
  [`{"${TRACE}":1}`, true],
  [`{"nested":{"trace":"${TRACE}"},"n":1.5,"ok":true,"none":null}`, true],
  // A \\u escape: never shaped, so that a search finds a shape holds none (metadataMayHoldSql).
  ['{"customer":"café ☕","emoji":"\\ud83d\\ude00"}', false],
  // Not hex enough, or not lowercase: no value set aside, the whole JSON is the shape.
  [`{"trace_id":"${TRACE.slice(0, 14)}"}`, true],
  [`{"trace_id":"${TRACE.toUpperCase()}"}`, true],
  [`{"trace_id":"${TRACE.slice(0, 31)}"}`, true],
  // Holding the six characters the shapes mark their slot with: never shaped.
  [`{"x":"\\\\u0000","trace_id":"${TRACE}"}`, false],
  [`{"x":"\\u0000","trace_id":"${TRACE}"}`, false],
  // Too long to be remembered as a shape.
  [`{"note":"${'n'.repeat(1_100)}","trace_id":"${TRACE}"}`, false],
];

describe('request metadata coded by its shape', () => {
  it('gives back every metadata to the byte, coded from the second row of its shape on', async () => {
    const path = join(scratch, 'metadata.db');
    // Each metadata three times, in three writes: the first sighting stays in its row.
    const written = [0, 1, 2].map((round) =>
      METADATA.map(([metadata], i) => ({
        ...requestRecord(i),
        req_id: `m${round}-${i}`,
        ts: T0 + round * 1_000 + i,
        metadata,
      })),
    );
    for (const rows of written) await recordRequests(control, path, rows);
    const db = openTelemetry(path);
    try {
      const byHand = METADATA.map(([metadata], i) => ({
        ...requestRecord(i),
        req_id: `h-${i}`,
        ts: T0 + 5_000 + i,
        metadata,
      }));
      const insert = db.prepare(
        `INSERT INTO requests (${REQUEST_COLUMNS.join(', ')}) VALUES (${REQUEST_COLUMNS.map((c) => `@${c}`).join(', ')})`,
      );
      for (const row of byHand) insert.run(row);
      const read = db.prepare('SELECT metadata FROM requests ORDER BY ts').pluck().all();
      expect(read).toEqual([...written.flat(), ...byHand].map((row) => row.metadata));

      const coded = db
        .prepare("SELECT typeof(metadata) = 'integer' FROM request_rows ORDER BY ts")
        .pluck()
        .all()
        .map(Boolean);
      const shaped = METADATA.map(([, can]) => can);
      // The first write's rows in their text (each shape seen once), the next two coded where they can be;
      // rows written by hand in their text.
      expect(coded).toEqual([...METADATA.map(() => false), ...shaped, ...shaped, ...METADATA.map(() => false)]);
      // The trace id's 16 bytes are set aside from the shape, which holds the rest once.
      const first = db.prepare("SELECT length(metadata_hex) FROM request_rows WHERE req_id = 'm1-0'").pluck().get();
      expect(first).toBe(16);
      const shapes = db.prepare("SELECT COUNT(*) FROM request_strings WHERE text LIKE '%\\u0000%'").pluck().get();
      expect(shapes).toBe(5);
    } finally {
      db.close();
    }
  });

  it('searches shaped metadata for the trace ids set aside, by the index and by reading the rows', async () => {
    const path = join(scratch, 'search.db');
    const rows = Array.from({ length: 60 }, (_, i) => ({
      ...requestRecord(i),
      req_id: `s-${i}`,
      ts: T0 + i * 1_000,
      metadata:
        // A customer's name with an escaped letter, which only taking the JSON apart finds.
        i === 7
          ? `{"customer":"\\u0061cme","trace_id":"${TRACE}"}`
          : JSON.stringify({
              customer: i % 2 === 0 ? 'acme' : 'globex',
              trace_id: `${i.toString(16).padStart(4, '0')}${TRACE.slice(4)}`,
            }),
    }));
    await recordRequests(control, path, rows);
    const db = openTelemetry(path);
    try {
      const queries = new AnalyticsQueries(new SqliteSql(db));
      const search = async (text: string) =>
        (
          (await queries.run({
            kind: 'requests',
            filter: { orgId: rows[0]!.org_id, from: T0, to: T0 + 120_000, search: text },
            limit: 100,
            offset: 0,
          })) as RequestPage
        ).rows.map((row) => row.req_id);
      // The rows whose request id, or a key or value of whose metadata, holds the text.
      const expected = (text: string) =>
        rows
          .filter(
            (row) =>
              row.req_id.includes(text) ||
              Object.entries(JSON.parse(row.metadata) as Record<string, string>).some(
                ([key, value]) => key.includes(text) || value.includes(text),
              ),
          )
          .map((row) => row.req_id)
          .reverse();
      // A whole trace id (the index), a part of every one, short parts (the rows read: in a trace
      // id, in a name, in the escaped name only, in the shapes' slot only), a customer.
      const texts = [`002a${TRACE.slice(4)}`, TRACE.slice(10, 30), '02a', 'cme', 'glo', '000', 'u00', 'globex'];
      for (const text of texts) expect(await search(text)).toEqual(expected(text));
      expect(expected('02a')).toHaveLength(1);
      expect(expected('cme')).toContain('s-7');
      expect(expected('u00')).toEqual([]);
    } finally {
      db.close();
    }
  });
});
