import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { AnalyticsQueries } from '../../server/analytics/queries.js';
import type { RequestPage } from '../../server/analytics/query-types.js';
import { SqliteSql } from '../../server/analytics/sqlite-sql.js';
import { RepeatedRequest, recordRequests } from '../../server/ingest/record-requests.js';
import { SqliteControlStore } from '../../server/stores/control/store.js';
import { expireRows } from '../../server/stores/telemetry/expire-rows.js';
import { expireTerms } from '../../server/stores/telemetry/expire-terms.js';
import { REQUEST_COLUMNS, type RequestRecord } from '../../server/stores/telemetry/request-record.js';
import { casefold } from '../../server/stores/telemetry/search-terms.js';
import { openTelemetry } from '../../server/stores/telemetry/store.js';
import { requestRecord } from './request-rows.js';

const scratch = mkdtempSync(join(tmpdir(), 'gc-compact-ids-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const control = SqliteControlStore.open(join(scratch, 'control.db'), { accessSeconds: 60, refreshSeconds: 600 });

const T0 = Date.UTC(2026, 10, 2);
const DAY = { from: T0 - 3_600_000, to: T0 + 86_400_000 };

/** A request of organisation `org` at `ts` with `id` and `metadata`. */
const row = (org: string, ts: number, id: string, metadata: Record<string, unknown> = {}): RequestRecord => ({
  ...requestRecord(0),
  org_id: org,
  ts,
  req_id: id,
  metadata: JSON.stringify(metadata),
});

/** Ids of every form: the gateway's (32 hex digits), the demo's (28), and others stored as text. */
const GATEWAY_ID = 'req_0123456789abcdef0123456789abcdef';
const DEMO_ID = 'req_00019a4c2b1e7f3a9d2c8e4b6a01';
const TEXT_IDS = ['req-7', 'REQ_ABCD', 'req_abc', 'req_', 'req_0a0b0G', 'abc', 'req_zz', 'ŕeq_0a'];

/** The log's order: newest first, ties by the id's text. */
const logOrder = (rows: readonly RequestRecord[]) =>
  [...rows].sort((a, b) => b.ts - a.ts || (a.req_id < b.req_id ? 1 : a.req_id > b.req_id ? -1 : 0));

async function pages(path: string, orgId: string, search?: string): Promise<{ total: number; ids: string[] }> {
  const db = new BetterSqlite3(path, { readonly: true });
  try {
    const queries = new AnalyticsQueries(new SqliteSql(db));
    const ids: string[] = [];
    let total = 0;
    for (let offset = 0; ; offset += 3) {
      // Casefolded, as the API hands it on.
      const filter = { orgId, ...DAY, ...(search === undefined ? {} : { search: casefold(search) }) };
      const page = (await queries.run({ kind: 'requests', filter, limit: 3, offset })) as RequestPage;
      total = page.total;
      ids.push(...page.rows.map((r) => r.req_id));
      if (page.rows.length < 3) return { total, ids };
    }
  } finally {
    db.close();
  }
}

async function requestById(path: string, orgId: string, reqId: string): Promise<RequestRecord | null> {
  const db = new BetterSqlite3(path, { readonly: true });
  try {
    return (await new AnalyticsQueries(new SqliteSql(db)).run({
      kind: 'request',
      orgId,
      reqId,
    })) as RequestRecord | null;
  } finally {
    db.close();
  }
}

describe('request ids stored in bytes', () => {
  it('keeps ids of the hex form in bytes and every other as text, each read and found back as written', async () => {
    const path = join(scratch, 'forms.db');
    const rows = [GATEWAY_ID, DEMO_ID, ...TEXT_IDS].map((id, i) => row('org-a', T0 + i, id));
    await recordRequests(control, path, rows);
    const db = new BetterSqlite3(path, { readonly: true });
    const stored = db.prepare('SELECT typeof(req_id) AS type, length(req_id) AS bytes FROM request_rows ORDER BY id');
    expect(stored.all().slice(0, 2)).toEqual([
      { type: 'blob', bytes: 16 },
      { type: 'blob', bytes: 14 },
    ]);
    expect(
      stored
        .all()
        .slice(2)
        .every((r) => (r as { type: string }).type === 'text'),
    ).toBe(true);
    expect(db.prepare('SELECT req_id FROM requests ORDER BY rowid').pluck().all()).toEqual(rows.map((r) => r.req_id));
    db.close();
    for (const record of rows) expect(await requestById(path, 'org-a', record.req_id)).toEqual(record);
    // Not another form's bytes or text: an id that only differs in case, or is one digit short.
    expect(await requestById(path, 'org-a', GATEWAY_ID.toUpperCase().replace('REQ_', 'req_'))).toBeNull();
    expect(await requestById(path, 'org-a', GATEWAY_ID.slice(0, -2))).toBeNull();
    await expect(recordRequests(control, path, [row('org-a', T0, GATEWAY_ID)])).rejects.toBeInstanceOf(RepeatedRequest);
    await expect(recordRequests(control, path, [row('org-a', T0, DEMO_ID)])).rejects.toThrow(DEMO_ID);
  });

  it('takes a row written by hand in SQL into bytes as the writer does', () => {
    const db = openTelemetry(join(scratch, 'by-hand.db'));
    const insert = db.prepare(
      `INSERT INTO requests (${REQUEST_COLUMNS.join(', ')}) VALUES (${REQUEST_COLUMNS.map((c) => '@' + c).join(', ')})`,
    );
    insert.run(row('org-a', T0, GATEWAY_ID));
    insert.run(row('org-a', T0, 'req-7'));
    expect(db.prepare('SELECT typeof(req_id) FROM request_rows ORDER BY id').pluck().all()).toEqual(['blob', 'text']);
    expect(db.prepare('SELECT req_id FROM requests ORDER BY rowid').pluck().all()).toEqual([GATEWAY_ID, 'req-7']);
    // Its organisation noted as holding an id stored as text: its pages sort by the texts.
    const noted = db.prepare('SELECT s.text FROM request_text_ids JOIN request_strings s ON s.code = org_code');
    expect(noted.pluck().all()).toEqual(['org-a']);
    expect(() => insert.run(row('org-b', T0, GATEWAY_ID))).toThrow(/UNIQUE constraint failed: request_rows.req_id/);
    db.close();
  });

  it('orders ties by the ids as text, whether an organisation holds ids of one form or of several', async () => {
    const path = join(scratch, 'ties.db');
    const hex = (n: number, digits: number) => n.toString(16).padStart(digits, '0');
    // Ids of different lengths sharing prefixes, all in the same few milliseconds.
    const compact = Array.from({ length: 24 }, (_, i) =>
      row('org-a', T0 + (i % 3), `req_${hex((i * 37) % 256, 2).repeat(1 + (i % 4))}`),
    );
    const mixed = [...compact.slice(0, 12), ...TEXT_IDS.map((id) => ({ id }))].map((r, i) =>
      row('org-b', T0 + (i % 2), 'id' in r ? r.id : `${r.req_id}ff`),
    );
    await recordRequests(control, path, [...compact, ...mixed]);
    for (const [org, rows] of [
      ['org-a', compact],
      ['org-b', mixed],
    ] as const) {
      expect(await pages(path, org)).toEqual({ total: rows.length, ids: logOrder(rows).map((r) => r.req_id) });
    }
  });

  it('finds a row by a piece of its id or of a metadata value packed in its terms, before and after retention', async () => {
    const path = join(scratch, 'search.db');
    const trace = 'a3f9c2e17b4d';
    const first = row('org-a', T0, GATEWAY_ID, { trace_id: trace, customer: 'Globex' });
    const others = [row('org-a', T0 + 10, DEMO_ID, { customer: 'acme' }), row('org-a', T0 + 20, 'req-7', { ref: 'x' })];
    // A later row holds the same trace id: its term becomes shared.
    const later = row('org-a', T0 + 3_600_000, `${GATEWAY_ID.slice(0, -2)}00`, { parent: trace });
    await recordRequests(control, path, [first, ...others, later]);
    const db = new BetterSqlite3(path, { readonly: true });
    // The id no term (found through its row, 024), the trace id (too short to be set aside from
    // the metadata) packed in bytes, the words kept as text; the trace id shared.
    const terms = db.prepare('SELECT text, shared FROM search_terms WHERE row = 1 ORDER BY id').raw().all();
    expect(terms).toEqual([
      ['trace_id', 0],
      [Buffer.from(`00${trace}`, 'hex'), 1],
      ['customer', 1],
      ['globex', 0],
    ]);
    db.close();
    for (const [search, ids] of [
      ['456789ABCDEF01', [later.req_id, GATEWAY_ID]],
      ['9a4c2b', [DEMO_ID]],
      ['req', [later.req_id, others[1]!.req_id, DEMO_ID, GATEWAY_ID]],
      ['f9c2e1', [later.req_id, GATEWAY_ID]],
      ['LOBE', [GATEWAY_ID]],
      ['acm', [DEMO_ID]],
    ] as const) {
      expect(await pages(path, 'org-a', search), search).toEqual({ total: ids.length, ids });
    }

    const writer = openTelemetry(path);
    expect(expireRows(writer, 'org-a', T0 + 1, 10)).toBe(1);
    // The key only it held and the value kept as text; not the two now shared.
    expect(expireTerms(writer, 'org-a').terms).toBe(2);
    writer.close();
    expect(await pages(path, 'org-a', 'f9c2e1')).toEqual({ total: 1, ids: [later.req_id] });
    expect(await pages(path, 'org-a', '456789abcdef01')).toEqual({ total: 1, ids: [later.req_id] });
    expect(await pages(path, 'org-a', 'globex')).toEqual({ total: 0, ids: [] });
  });

  it('searches the terms and rows of the epochs being filled as they are written, from one reading connection', async () => {
    const path = join(scratch, 'filling.db');
    const hexId = (i: number) => `req_${(0x1000_0000 + i).toString(16)}`;
    const batch = (from: number, count: number) =>
      Array.from({ length: count }, (_, i) =>
        row('org-a', T0 + from + i, hexId(from + i), { trace: `${(0xabc0_0000 + from + i).toString(16)}` }),
      );
    const written: RequestRecord[] = [];
    const write = async (records: RequestRecord[]) => {
      await recordRequests(control, path, records);
      written.push(...records);
    };
    await write(batch(0, 100));
    const reader = new BetterSqlite3(path, { readonly: true });
    const queries = new AnalyticsQueries(new SqliteSql(reader));
    const search = async (text: string) => {
      const filter = { orgId: 'org-a', from: T0, to: T0 + 86_400_000, search: text };
      return ((await queries.run({ kind: 'requests', filter, limit: 100, offset: 0 })) as RequestPage).rows
        .map((r) => r.req_id)
        .sort();
    };
    const expected = (text: string) =>
      written
        .filter((r) => r.req_id.includes(text) || r.metadata.includes(text))
        .map((r) => r.req_id)
        .sort();
    try {
      for (const text of ['1000005', 'abc0005']) expect(await search(text)).toEqual(expected(text));
      // Rows and terms written since the last search, in the same epochs: read by the next.
      await write(batch(100, 100));
      for (const text of ['1000005', '10000c', 'abc0005', 'abc00c7'])
        expect(await search(text)).toEqual(expected(text));
      // Past the first epoch of rows (65,536) and of terms (65,536 trace ids: the request ids are
      // none): the writer signs them, the next ones are filled here.
      await write(batch(200, 66_000));
      expect(reader.prepare('SELECT MAX(epoch) FROM search_row_epochs').pluck().get()).toBe(0);
      expect(reader.prepare('SELECT MAX(epoch) FROM search_epochs').pluck().get()).toBe(0);
      for (const text of ['1000005', '10080e', 'abc080e', '1008096', '10010234', 'abc10234'])
        expect(await search(text)).toEqual(expected(text));
    } finally {
      reader.close();
    }
  });
});
