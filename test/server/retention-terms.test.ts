import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { AnalyticsQueries } from '../../server/analytics/queries.js';
import type { RequestFilter } from '../../server/analytics/query-types.js';
import { SqliteSql } from '../../server/analytics/sqlite-sql.js';
import { recordRequests } from '../../server/ingest/record-requests.js';
import { SqliteControlStore } from '../../server/stores/control/store.js';
import { expireRows } from '../../server/stores/telemetry/expire-rows.js';
import { expireTerms, SWEEP_TERM_IDS } from '../../server/stores/telemetry/expire-terms.js';
import { REQUEST_COLUMNS, type RequestRecord } from '../../server/stores/telemetry/request-record.js';
import { openTelemetry } from '../../server/stores/telemetry/store.js';
import { expectPage, HORIZON, MAIN, MINUTE, NOW, OTHER, retentionRows, START, traceOf } from './retention-rows.js';

/**
 * Retention's removal of the search terms of deleted rows (stores/telemetry/expire-terms.ts):
 * after the rows go, their terms go too, but for shared ones and the other organisation's; the
 * terms of every row kept stay, and every search answers as before over the rows kept.
 */

vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

const scratch = mkdtempSync(join(tmpdir(), 'gc-retention-terms-'));
let control: SqliteControlStore;

beforeAll(() => {
  control = SqliteControlStore.open(join(scratch, 'control.db'), { accessSeconds: 900, refreshSeconds: 3600 });
});
afterAll(async () => {
  await control?.close();
  rmSync(scratch, { recursive: true, force: true });
});

interface Term {
  id: number;
  org_id: string;
  row: number;
  shared: number;
}

/** A store of `batches` written one after the other, with a writer and a reader on it. */
async function storeOf(name: string, batches: RequestRecord[][]) {
  const path = join(scratch, `${name}.db`);
  for (const batch of batches) await recordRequests(control, path, batch);
  const writer = openTelemetry(path);
  const reader = new BetterSqlite3(path, { readonly: true });
  const terms = () =>
    reader
      .prepare(
        `SELECT t.id, s.text AS org_id, t.row, t.shared
        FROM search_terms t JOIN request_strings s ON s.code = t.org_code ORDER BY t.id`,
      )
      .all() as Term[];
  const rowids = () => new Set(reader.prepare('SELECT rowid FROM requests').pluck().all() as number[]);
  return { writer, reader, terms, rowids, close: () => (reader.close(), writer.close()) };
}

/** Deletes MAIN's rows before the horizon, then sweeps its terms until there is nothing more to do: how many calls and terms. */
function expireAll(db: BetterSqlite3.Database): { calls: number; terms: number; rows: number } {
  let rows = 0;
  for (let n = expireRows(db, MAIN, HORIZON, 500); n > 0; n = expireRows(db, MAIN, HORIZON, 500)) rows += n;
  let calls = 0;
  let terms = 0;
  for (;;) {
    const swept = expireTerms(db, MAIN);
    calls++;
    terms += swept.terms;
    if (!swept.more) break;
  }
  return { calls, terms, rows };
}

const stored = (reader: BetterSqlite3.Database) =>
  reader.prepare(`SELECT ${REQUEST_COLUMNS.join(', ')} FROM requests`).all() as RequestRecord[];

describe('retention removes the search terms of the rows it deleted', () => {
  it('all of them when rows came in time order, as the gateway writes them; nothing another row holds', async () => {
    // Four days of two organisations' rows, in time order, written in batches as the gateway does.
    const rows = retentionRows(6_000, { seed: 21, prefix: 'ord-', from: START, to: NOW, mainShare: 0.7 }).sort(
      (a, b) => a.ts - b.ts,
    );
    const batches = Array.from({ length: 12 }, (_, i) => rows.slice(i * 500, (i + 1) * 500));
    const store = await storeOf('ordered', batches);
    try {
      const before = store.terms();
      const newest = before.at(-1)!;
      const { calls, terms: swept, rows: deleted } = expireAll(store.writer);
      expect(deleted).toBeGreaterThan(1_000);
      // A stretch of ids at a time: more than one call, each short.
      expect(calls).toBeGreaterThan(before.length / 2 / SWEEP_TERM_IDS);

      const kept = store.rowids();
      const after = store.terms();
      const gone = new Set(before.map((t) => t.id));
      for (const t of after) gone.delete(t.id);
      expect(swept).toBe(gone.size);
      // What went: MAIN's own terms of rows deleted, and nothing else.
      for (const t of before) {
        const orphan = t.org_id === MAIN && !t.shared && !kept.has(t.row) && t.id !== newest.id;
        expect(gone.has(t.id), JSON.stringify(t)).toBe(orphan);
      }
      expect(gone.size).toBeGreaterThan(deleted);
      // OTHER's terms, the shared ones and those of the rows kept are all there.
      expect(after.filter((t) => t.org_id === OTHER)).toEqual(before.filter((t) => t.org_id === OTHER));
      expect(after.filter((t) => t.shared)).toEqual(before.filter((t) => t.shared));

      // Searches over the rows kept answer as the reference does: ids, traces, shared values, pieces.
      const queries = new AnalyticsQueries(new SqliteSql(store.reader));
      const now = stored(store.reader);
      const keptMain = now.filter((row) => row.org_id === MAIN && row.ts >= HORIZON);
      const texts = ['lahore', 'straße', 'tr-', 'ord-00', keptMain[3]!.req_id, traceOf(keptMain.find(traceOf)!)!];
      for (const search of texts) {
        const filter: RequestFilter = { orgId: MAIN, from: START, to: NOW, horizon: HORIZON, search };
        expectPage(await queries.run({ kind: 'requests', filter, limit: 50, offset: 0 }), now, filter, 0);
      }

      // Nothing is left to do: a sweep now looks at no more than the terms written since.
      expect(expireTerms(store.writer, MAIN)).toEqual({ terms: 0, more: false });
      const later = retentionRows(200, { seed: 22, prefix: 'new-', from: NOW - 30 * MINUTE, to: NOW });
      await recordRequests(control, join(scratch, 'ordered.db'), later);
      const written = store.terms();
      expect(written.length).toBeGreaterThan(after.length);
      expect(expireTerms(store.writer, MAIN)).toEqual({ terms: 0, more: false });
      expect(store.terms()).toEqual(written);
    } finally {
      store.close();
    }
  });

  it('finds a row by its own request id and trace id, which are no terms, and never a row deleted', async () => {
    const base = retentionRows(40, { seed: 24, prefix: 'own-', from: START, to: NOW }).filter(
      (row) => row.org_id === MAIN,
    );
    const hex = (digit: string) => digit.repeat(32);
    const own = (i: number, ts: number, trace: string): RequestRecord => ({
      ...base[i]!,
      ts,
      req_id: `req_${String(i).repeat(24)}`,
      metadata: JSON.stringify({ customer: 'umbrella', trace_id: trace }),
    });
    // The second row's shape is the writer's second sighting: its trace id is set aside; the first
    // keeps it in its JSON. The third holds the same trace id as the second, the deleted one.
    const rows = [
      own(1, HORIZON - 3 * MINUTE, hex('a')),
      own(2, HORIZON - 2 * MINUTE, hex('b')),
      own(3, HORIZON + MINUTE, hex('b')),
      own(4, HORIZON + 2 * MINUTE, hex('d')),
    ];
    const store = await storeOf('own-strings', [rows]);
    try {
      const text = store.reader.prepare(
        `SELECT t.text FROM search_terms t JOIN requests r ON r.rowid = t.row
        WHERE r.req_id = ? ORDER BY t.id`,
      );
      // Request ids and trace ids are found through the rows (024): their only terms are the
      // metadata's key and customer, the first row's.
      for (const row of rows.slice(1)) expect(text.all(row.req_id)).toEqual([]);
      expect(text.all(rows[0]!.req_id)).toHaveLength(3);

      expireAll(store.writer);
      expect([...store.rowids()]).toHaveLength(2);
      const queries = new AnalyticsQueries(new SqliteSql(store.reader));
      const now = stored(store.reader);
      for (const search of [hex('b').slice(3, 20), hex('d').slice(0, 12), rows[3]!.req_id.slice(2, 16), 'req_2']) {
        const filter: RequestFilter = { orgId: MAIN, from: START, to: NOW, horizon: HORIZON, search };
        const answer = await queries.run({ kind: 'requests', filter, limit: 50, offset: 0 });
        expectPage(answer, now, filter, 0);
        expect(answer.total, search).toBe(search === 'req_2' ? 0 : 1);
      }
    } finally {
      store.close();
    }
  });

  it('late, never wrongly, when rows were imported out of time order: held at the first row kept', async () => {
    // Times in any order within each import: a row kept comes early among the terms.
    const rows = retentionRows(3_000, { seed: 23, prefix: 'any-', from: START, to: NOW, mainShare: 0.8 });
    const store = await storeOf('unordered', [rows.slice(0, 1_500), rows.slice(1_500)]);
    try {
      const before = store.terms();
      expireAll(store.writer);
      const kept = store.rowids();
      const after = store.terms();
      const firstKept = before.find((t) => t.org_id === MAIN && !t.shared && kept.has(t.row))!;
      const swept = store.reader.prepare('SELECT swept FROM retention_terms WHERE org_id = ?').pluck().get(MAIN);
      expect(swept).toBe(firstKept.id - 1);
      // Before it, every orphan went; from it on, every term is still there.
      const afterIds = new Set(after.map((t) => t.id));
      for (const t of before) {
        const orphan = t.org_id === MAIN && !t.shared && !kept.has(t.row);
        if (t.id < firstKept.id) expect(afterIds.has(t.id), JSON.stringify(t)).toBe(!orphan);
        else expect(afterIds.has(t.id), JSON.stringify(t)).toBe(true);
      }
      // And the searches answer as the reference does over the rows kept.
      const queries = new AnalyticsQueries(new SqliteSql(store.reader));
      const now = stored(store.reader);
      for (const search of ['ravi', 'tr-', 'any-001', rows.find((row) => row.ts < HORIZON)!.req_id]) {
        const filter: RequestFilter = { orgId: MAIN, from: START, to: NOW, horizon: HORIZON, search };
        expectPage(await queries.run({ kind: 'requests', filter, limit: 50, offset: 0 }), now, filter, 0);
      }
    } finally {
      store.close();
    }
  });
});
