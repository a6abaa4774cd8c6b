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

const scratch = mkdtempSync(join(tmpdir(), 'gc-compact-timings-'));
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
