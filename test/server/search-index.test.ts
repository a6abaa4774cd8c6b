import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { AnalyticsQueries } from '../../server/analytics/queries.js';
import { SqliteSql } from '../../server/analytics/sqlite-sql.js';
import type { RequestFilter, RequestPage } from '../../server/analytics/query-types.js';
import { candidateRanges, SearchIndex } from '../../server/analytics/search-index.js';
import { recordRequests } from '../../server/ingest/record-requests.js';
import { SqliteControlStore } from '../../server/stores/control/store.js';
import { REQUEST_COLUMNS, type RequestRecord } from '../../server/stores/telemetry/request-record.js';
import { RequestStrings } from '../../server/stores/telemetry/request-rows.js';
import {
  CHUNK_ROWS,
  EPOCH_ROWS,
  EPOCH_TERMS,
  ownTexts,
  pieceBuckets,
  registerSearchFunctions,
  ROW_SIGNATURES,
  searchTexts,
  TERM_SIGNATURES,
} from '../../server/stores/telemetry/search-terms.js';
import { registerTelemetryFunctions } from '../../server/stores/telemetry/sql-functions.js';
import { SearchPlanner, searchLookups } from '../../server/stores/telemetry/search-planner.js';
import { SearchWriter } from '../../server/stores/telemetry/search-writer.js';
import { openTelemetry, TELEMETRY_MIGRATIONS } from '../../server/stores/telemetry/store.js';
import * as ref from './analytics-reference.js';
import { COLUMNS_OF_001, dropAddedColumns, signatures, signedFromStore } from './request-rows.js';

// Each case writes or migrates a store of hundreds of thousands of rows: on two shared cores
// that can take most of a minute.
vi.setConfig({ testTimeout: 60_000 });

/**
 * The request log's search through its index against the reference model, on a store
 * larger than two of the index's blocks of 65,536 rows, with rows written out of time
 * order so that blocks straddle a window's edges.
 */

const scratch = mkdtempSync(join(tmpdir(), 'gc-search-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const ORG = 'org-a';
const OTHER = 'org-b';
const T0 = 1_763_000_000_000;
const HOUR = 3_600_000;
const CUSTOMERS = ['Lahore-Health', 'KARACHI-logistics', 'Straße-Öl', 'İdris-Ωmega', 'ravi-foods'];

/** A small deterministic generator: the same rows on every run. */
function generator(seed: number) {
  let state = seed;
  return () => {
    state = (Math.imul(state, 1_103_515_245) + 12_345) >>> 0;
    return state / 2 ** 32;
  };
}

function rows(
  count: number,
  firstTs: number,
  stepMs: number,
  idOf: (i: number) => string,
  longTraces = false,
): RequestRecord[] {
  const random = generator(count + firstTs);
  // A trace id of 32 hex digits is set aside from the metadata, and found through its row (024).
  const hex32 = () =>
    Array.from({ length: 4 }, () =>
      Math.floor(random() * 2 ** 32)
        .toString(16)
        .padStart(8, '0'),
    ).join('');
  return Array.from({ length: count }, (_, i) => {
    const pick = random();
    const metadata: Record<string, string> =
      pick < 0.2
        ? {}
        : {
            customer: CUSTOMERS[Math.floor(random() * CUSTOMERS.length)]!,
            trace_id: longTraces ? hex32() : Math.floor(random() * 2 ** 48).toString(16),
            ...(pick > 0.95 ? { 'Parent-Req': idOf(i >> 1) } : {}),
            ...(pick > 0.97 ? { 'rare-key': 'Seldom' } : {}),
          };
    return {
      req_id: idOf(i),
      ts: firstTs + i * stepMs,
      org_id: i % 9 === 0 ? OTHER : ORG,
      project_id: null,
      key_id: null,
      model: i % 3 ? 'openai/gpt-4o' : 'svc/fast',
      status: i % 17 ? 200 : 503,
      stream: 0,
      total_ms: 100,
      ttft_ms: null,
      tpot_ms: null,
      pre_dispatch_ms: 5,
      prompt_tokens: 10,
      tokens_generated: 10,
      cache_creation_input_tokens: null,
      cache_read_input_tokens: null,
      total_tokens: 20,
      tokens_estimated: 0,
      cost_micro: i % 1000,
      is_byok: 0,
      termination_reason: 'success',
      upstream_error: null,
      upstream_model: null,
      served_by: null,
      attempts: null,
      api: null,
      user_agent: 'Lahore-Health agent',
      metadata: JSON.stringify(metadata),
    };
  });
}

// Newer rows first, then a batch of older ones: their blocks' times overlap.
// Ids stored as text, and as bytes (request-rows.ts); trace ids of an even number of hex digits
// are packed in their search terms (search-terms.ts), the others kept as text. The older rows'
// ids and trace ids are their own texts, found through the rows (024).
const NEWER = rows(100_000, T0 + 200 * HOUR, 9_000, (i) => `Req-N${i}`);
const OLDER = rows(40_000, T0, 30_000, (i) => `req_${(0xe000_0000 + i).toString(16)}`, true);
/** A piece of an older row's trace id. */
const traceOf = (i: number, from: number, to: number) =>
  (JSON.parse(OLDER[i]!.metadata) as { trace_id: string }).trace_id.slice(from, to);
const ALL = [...NEWER, ...OLDER];

let control: SqliteControlStore;
let queries: AnalyticsQueries;
let reader: BetterSqlite3.Database;

beforeAll(async () => {
  const path = join(scratch, 'telemetry.db');
  control = SqliteControlStore.open(join(scratch, 'control.db'), { accessSeconds: 900, refreshSeconds: 3600 });
  await recordRequests(control, path, NEWER.slice(0, 70_000));
  await recordRequests(control, path, NEWER.slice(70_000));
  await recordRequests(control, path, OLDER);
  reader = new BetterSqlite3(path, { readonly: true });
  queries = new AnalyticsQueries(new SqliteSql(reader));
}, 120_000);
afterAll(() => control.close());

function log(filter: RequestFilter, limit: number, offset: number) {
  return queries.run({ kind: 'requests', filter, limit, offset });
}

/** A window as the reference model takes it, and as the queries take it. */
const window = (from: number, to: number) => ({ now: to, rangeMs: to - from });
const span = (w: { now: number; rangeMs: number }) => ({ from: w.now - w.rangeMs, to: w.now });

function expectLikeReference(all: RequestRecord[], answer: RequestPage, filter: ref.LogFilter, offset = 0) {
  const expected = ref.requestLog(all, filter);
  expect(answer.total).toBe(expected.length);
  expect(answer.rows.map((row) => row.req_id)).toEqual(
    expected.slice(offset, offset + answer.rows.length).map((row) => row.req_id),
  );
  expect(answer.rows.length).toBe(Math.min(50, Math.max(0, expected.length - offset)));
}

const WHOLE = window(T0 - HOUR, T0 + 1_000 * HOUR);
const SEARCHES = [
  'ahore-healt', // one shared value, most rows
  'straße', // unicode, casefolded
  'i̇dris', // 'İ' lowercases to two code points
  'ωmega',
  'seldom', // a rare value
  'rare-k', // a rare key
  're-', // two shared terms: a value and a key
  'customer', // a key on most rows
  'req-n1234', // request ids, and parent ids in other rows' metadata
  'e0009c3', // ids stored as bytes
  'req_e0009c3f',
  traceOf(123, 5, 13), // a trace id set aside: in a signed epoch of rows
  traceOf(39_000, 0, 32), // in the epoch of rows being filled
  traceOf(2_000, 10, 16),
  'n99999',
  'ealth', // in a value and in user agents, which do not count
  'gpt', // only in the model: matches nothing
  'zzzz',
  'hea', // three characters: no piece of four, every term a candidate
  'ra', // two: no piece either
  'req', // every request id: read from the rows
];

describe('the request log search index', () => {
  it('finds exactly the rows the reference finds, over whole and ragged windows', async () => {
    const windows = [
      WHOLE,
      // Edges inside blocks of both batches.
      window(T0 + 100 * HOUR + 1, T0 + 300 * HOUR - 1),
      window(T0 + 250 * HOUR, T0 + 251 * HOUR),
    ];
    for (const w of windows) {
      for (const search of SEARCHES) {
        expectLikeReference(ALL, await log({ orgId: ORG, ...span(w), search }, 50, 0), { orgId: ORG, ...w, search });
      }
    }
  });

  it('pages through matches in log order, with other filters and in either organisation', async () => {
    for (const search of ['ahore-healt', 'seldom', 'req-n1234', 'straße']) {
      for (const offset of [0, 37, 2_000]) {
        const filter = { orgId: ORG, ...WHOLE, search };
        expectLikeReference(ALL, await log({ orgId: ORG, ...span(WHOLE), search }, 50, offset), filter, offset);
      }
      const narrowed = { orgId: ORG, ...span(WHOLE), search, model: 'svc/fast', statusClass: 5 };
      expectLikeReference(ALL, await log(narrowed, 50, 0), {
        orgId: ORG,
        ...WHOLE,
        search,
        model: 'svc/fast',
        statusCategory: '5xx',
      });
      expectLikeReference(ALL, await log({ orgId: OTHER, ...span(WHOLE), search }, 50, 0), {
        orgId: OTHER,
        ...WHOLE,
        search,
      });
    }
  });

  it('reads only the few chunks of terms whose signatures hold every piece of the text', () => {
    const signed = reader.prepare('SELECT MAX(epoch) FROM search_epochs').pluck().get() as number;
    const index = new SearchIndex((sql) => reader.prepare(sql));
    // The rows above make about 180,000 terms: two epochs signed, the rest read one by one.
    expect(signed).toBe(1);
    const signedTerms = (signed + 1) * EPOCH_TERMS;
    // Of the signed terms: the rest are read whatever the text.
    const termsRead = (text: string) =>
      candidateRanges(pieceBuckets(text), signed, (bucket) => index.slices(bucket, signed))
        .filter(([from]) => from < signedTerms)
        .reduce((sum, [from, to]) => sum + Math.min(to, signedTerms - 1) - from + 1, 0);
    expect(termsRead('req-n1234')).toBeLessThan(EPOCH_TERMS / 20);
    expect(termsRead('ahore-healt')).toBeLessThan(EPOCH_TERMS / 20);
    expect(termsRead('no such customer')).toBe(0);
    // Three characters have no piece of four: every signed term is read.
    expect(termsRead('hea')).toBe(signedTerms);
  });

  it("reads only the few chunks of rows whose signatures hold every piece of the rows' own text", () => {
    const signed = reader.prepare('SELECT MAX(epoch) FROM search_row_epochs').pluck().get() as number;
    const index = new SearchIndex((sql) => reader.prepare(sql));
    // 140,000 rows: two epochs of 65,536 signed, the rest read as the reader fills their signature.
    expect(signed).toBe(1);
    const signedRows = (signed + 1) * EPOCH_ROWS;
    const rowsRead = (text: string) =>
      candidateRanges(
        pieceBuckets(text),
        signed,
        (bucket) => index.slices(bucket, signed, ROW_SIGNATURES),
        undefined,
        ROW_SIGNATURES,
      )
        .filter(([from]) => from < signedRows)
        .reduce((sum, [from, to]) => sum + Math.min(to, signedRows - 1) - from + 1, 0);
    // An older row's id (its rowid 100,001 + 4,096, in the second epoch): its chunk, and the few
    // others whose ids (numbered one after the other) hold each of its pieces.
    expect(rowsRead('req_e0001000')).toBeLessThanOrEqual(4 * CHUNK_ROWS);
    expect(rowsRead(traceOf(123, 5, 13))).toBeLessThan(EPOCH_ROWS / 20);
  });
});

describe('the search signatures', () => {
  it.each([
    ['terms', TERM_SIGNATURES, [0, 1]],
    ["rows' own texts", ROW_SIGNATURES, [0, 1]],
  ] as const)('of %s are written as they are, bit for bit what the store gives', (_, kind, epochs) => {
    // The imports above sign epochs as they fill them: the first import from its first term or
    // row, the next ones from one inside an epoch, whose earlier ones are read back.
    const written = signatures(reader, kind);
    expect(new Set(written.map(([epoch]) => epoch))).toEqual(new Set(epochs));
    const db = new BetterSqlite3(join(scratch, 'telemetry.db'));
    registerTelemetryFunctions(db);
    try {
      expect(signedFromStore(db, kind)).toEqual(written);
    } finally {
      db.close();
    }
  });

  it("of rows' own texts are signed again from the rows by migration 025 (chunks of 256 rows, not 128)", async () => {
    const path = join(scratch, 'row-chunks-v24.db');
    await reader.backup(path);
    const db = new BetterSqlite3(path);
    // As 024 left them: other bits (of chunks of 128 rows), under the version before 025.
    db.exec(`UPDATE search_row_signatures SET bits = zeroblob(length(bits));
      INSERT INTO search_row_epochs (epoch) VALUES (2), (3)`);
    db.pragma('user_version = 24');
    db.close();
    openTelemetry(path).close();
    const migrated = new BetterSqlite3(path, { readonly: true });
    try {
      expect(signatures(migrated, ROW_SIGNATURES)).toEqual(signatures(reader, ROW_SIGNATURES));
      expect(migrated.prepare('SELECT epoch FROM search_row_epochs').pluck().all()).toEqual([0, 1]);
    } finally {
      migrated.close();
    }
  });

  it('are read from the store for terms the writer did not see written', () => {
    const db = openTelemetry(join(scratch, 'signer-gaps.db'));
    const row = NEWER[0]!;
    const terms = (from: number, count: number) =>
      db
        .prepare(
          `WITH RECURSIVE n(i) AS (SELECT ? UNION ALL SELECT i + 1 FROM n WHERE i < ?)
           INSERT INTO search_terms (org_code, text, row) SELECT ?, 'stored term ' || i, 0 FROM n`,
        )
        .run(from, from + count - 1, new RequestStrings(db).codeOf(ORG));
    try {
      const writeRows = (count: number, between?: () => void) =>
        indexRows(
          db,
          Array.from({ length: count }, (_, i) => ({ ...row, req_id: `req-gap-${i}`, metadata: '{}' })),
          { between: (i) => (i === 1_000 ? between?.() : undefined) },
        );
      // A full epoch of terms nobody signed, as a migration's backfill leaves them, then a
      // writer that fills the next epoch: the earlier one must be signed first.
      db.transaction(() => terms(0, EPOCH_TERMS + 10))();
      writeRows(EPOCH_TERMS);
      const written = signatures(db);
      expect(new Set(written.map(([epoch]) => epoch))).toEqual(new Set([0, 1]));
      // A term written by something else under a number the planner gave: the import fails
      // and rolls back rather than signing bits that miss a term.
      expect(() => writeRows(EPOCH_TERMS, () => terms(1, 1))).toThrow(/search_terms\.id/);
      expect(signatures(db)).toEqual(written);
      writeRows(EPOCH_TERMS);
      const rewritten = signatures(db);
      expect(new Set(rewritten.map(([epoch]) => epoch))).toEqual(new Set([0, 1, 2]));
      expect(signedFromStore(db)).toEqual(rewritten);
    } finally {
      db.close();
    }
  });
});

describe('the search index writer', () => {
  it.each([
    ['read into memory', undefined],
    ['looked up', 0],
  ])('finds a value shared earlier in the same import after forgetting it (%s)', (_, preloadShared) => {
    const db = openTelemetry(join(scratch, `forget-${preloadShared ?? 'preload'}.db`));
    const row = (i: number, metadata: Record<string, string>) => ({
      ...NEWER[0]!,
      req_id: `req-forget-${i}`,
      metadata: JSON.stringify(metadata),
    });
    try {
      // A shared term in the store, so that "looked up" asks the store for the others.
      indexRows(db, [row(100, { b: 'w' }), row(101, { b: 'w' })]);
      // "v" is shared by the second row, then forgotten among unique values, then seen again.
      const rows = [row(0, { a: 'v' }), row(1, { a: 'v' })];
      for (let i = 2; i < 12; i++) rows.push(row(i, { [`k${i}`]: `unique ${i}` }));
      rows.push(row(12, { a: 'v' }));
      indexRows(db, rows, { preloadShared, cachedTerms: 3 });
      const terms = db.prepare('SELECT id, shared FROM search_terms WHERE text = ?').all('v');
      expect(terms).toEqual([{ id: expect.any(Number), shared: 1 }]);
      const tokens = db.prepare('SELECT COUNT(*) FROM search_rows WHERE search_rows MATCH ?').pluck();
      expect(tokens.get(`t${(terms[0] as { id: number }).id}`)).toBe(2);
    } finally {
      db.close();
    }
  });

  it("takes a row's request id, then each metadata key and string value once (one equal to the id too), casefolded", () => {
    const row = { ...NEWER[0]!, req_id: 'Req-1' };
    const metadata = '{"customer":"ACME","team":"acme","n":3,"req-1":"X","Tag":"req-1"}';
    expect(searchTexts({ ...row, metadata })).toEqual(['req-1', 'customer', 'acme', 'team', 'n', 'req-1', 'x', 'tag']);
    expect(searchTexts({ ...row, metadata: '{}' })).toEqual(['req-1']);
  });

  // With the shared terms read into memory at a batch's start, and asked of the store instead.
  it.each([
    ['read into memory', undefined],
    ['looked up', 0],
  ])('finds a value shared in an earlier batch (%s) instead of writing it again', async (_, preloadShared) => {
    const db = openTelemetry(join(scratch, `writer-${preloadShared ?? 'preload'}.db`));
    const insert = db.prepare(
      `INSERT INTO requests (${REQUEST_COLUMNS.join(', ')}, rowid)
      VALUES (${REQUEST_COLUMNS.map((c) => '@' + c).join(', ')}, @rowid)`,
    );
    const some = NEWER.slice(0, 3_000);
    for (let batch = 0; batch < 3; batch++) {
      indexRows(db, some.slice(batch * 1_000, (batch + 1) * 1_000), {
        preloadShared,
        insert: (row, rowid) => insert.run({ ...row, rowid }),
      });
    }
    const terms = db
      .prepare(
        `SELECT COUNT(*) FROM search_terms
        WHERE org_code = (SELECT code FROM request_strings WHERE text = ?) AND text = ?`,
      )
      .pluck();
    expect(terms.get(ORG, 'lahore-health')).toBe(1);
    expect(terms.get(ORG, 'customer')).toBe(1);
    db.close();

    const written = new AnalyticsQueries(
      new SqliteSql(new BetterSqlite3(join(scratch, `writer-${preloadShared ?? 'preload'}.db`))),
    );
    for (const search of SEARCHES) {
      const answer = await written.run({
        kind: 'requests',
        filter: { orgId: ORG, ...span(WHOLE), search },
        limit: 50,
        offset: 0,
      });
      expectLikeReference(some, answer, { orgId: ORG, ...WHOLE, search });
    }
  });
});

describe('the search index migration', () => {
  it('indexes the rows a store already held as the writer would', async () => {
    const path = join(scratch, 'old.db');
    const old = new BetterSqlite3(path);
    for (const file of ['001_request_log.sql', '002_rollups.sql']) {
      old.exec(readFileSync(new URL(file, TELEMETRY_MIGRATIONS), 'utf8'));
    }
    old.pragma('user_version = 2');
    const insert = old.prepare(
      `INSERT INTO requests (${COLUMNS_OF_001.join(', ')}) VALUES (${COLUMNS_OF_001.map((c) => '@' + c).join(', ')})`,
    );
    const some = [...NEWER.slice(0, 3_000), ...OLDER.slice(0, 2_000)];
    old.transaction(() => some.forEach((row) => insert.run(row)))();
    old.close();
    openTelemetry(path).close();

    const migrated = new AnalyticsQueries(new SqliteSql(new BetterSqlite3(path, { readonly: true })));
    for (const search of SEARCHES) {
      const filter = { orgId: ORG, ...span(WHOLE), search };
      const answer = await migrated.run({ kind: 'requests', filter, limit: 50, offset: 0 });
      expectLikeReference(some, answer, { orgId: ORG, ...WHOLE, search });
    }
  });
});

describe('the signature layout migration', () => {
  it('cuts rows of 64 buckets keyed by epoch into the rows of 16 keyed by page that the writer now signs', async () => {
    // A store with two signed epochs, as the writer signs them today...
    const path = join(scratch, 'signatures-v4.db');
    await reader.backup(path);
    const db = new BetterSqlite3(path);
    registerTelemetryFunctions(db);
    const current = () => db.prepare('SELECT page, epoch, bits FROM search_signatures ORDER BY page, epoch').all();
    const signed = current() as { page: number; epoch: number; bits: Buffer }[];
    expect(new Set(signed.map((row) => row.epoch))).toEqual(new Set([0, 1]));

    // ...turned back into the layout of migration 003 and the store's version before 005.
    db.exec(`DROP TABLE search_signatures;
      CREATE TABLE search_signatures (epoch INTEGER NOT NULL, page INTEGER NOT NULL, bits BLOB NOT NULL,
        PRIMARY KEY (epoch, page)) WITHOUT ROWID`);
    const insert = db.prepare('INSERT INTO search_signatures (epoch, page, bits) VALUES (?, ?, ?)');
    for (const epoch of [0, 1]) {
      const bits = Buffer.concat(signed.filter((row) => row.epoch === epoch).map((row) => row.bits));
      for (let page = 0; page < bits.length / 2048; page++) {
        insert.run(epoch, page, bits.subarray(page * 2048, (page + 1) * 2048));
      }
    }
    // Tables of later migrations go too, so that they run again.
    const atVersion4 = new BetterSqlite3(':memory:');
    registerSearchFunctions(atVersion4);
    for (const file of ['001_request_log.sql', '002_rollups.sql', '003_search.sql', '004_dimension_rollups.sql']) {
      atVersion4.exec(readFileSync(new URL(file, TELEMETRY_MIGRATIONS), 'utf8'));
    }
    const tables = (store: BetterSqlite3.Database) =>
      store
        .prepare("SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'search_rows_%'")
        .pluck()
        .all();
    dropAddedColumns(db);
    const earlier = new Set(tables(atVersion4));
    for (const table of tables(db)) if (!earlier.has(table)) db.exec(`DROP TABLE ${table as string}`);
    db.pragma('user_version = 4');
    db.close();

    openTelemetry(path).close();
    const migrated = new BetterSqlite3(path, { readonly: true });
    // Those two epochs as they were (the rows' own texts, terms again in the older store, were
    // numbered after them: their epochs are signed when it is opened, then 024 deletes the terms).
    const sql = 'SELECT page, epoch, bits FROM search_signatures WHERE epoch <= 1 ORDER BY page, epoch';
    expect(migrated.prepare(sql).all()).toEqual(signed);
    // The rows' own signatures, signed from the rows when it was opened, as the writer signed them (024).
    const rowSignatures = 'SELECT epoch, page, bits FROM search_row_signatures ORDER BY epoch, page';
    expect(migrated.prepare(rowSignatures).raw().all()).toEqual(reader.prepare(rowSignatures).raw().all());
    migrated.close();
  });
});

/**
 * Plans the search index's entries of `rows`, then writes them, in one transaction, as an
 * import does with a batch; `insert` writes each row itself under the rowid planned for it.
 */
function indexRows(
  db: BetterSqlite3.Database,
  rows: RequestRecord[],
  options: {
    preloadShared?: number;
    cachedTerms?: number;
    between?: (i: number) => void;
    insert?: (row: RequestRecord, rowid: number) => void;
  } = {},
): void {
  db.transaction(() => {
    const planner = new SearchPlanner(searchLookups(db), options);
    let term = planner.term;
    const planned = rows.map((row) => {
      const rowid = planner.rowid;
      return { row, rowid, entries: planner.plan(row.org_id, row.ts, searchTexts(row), ownTexts(row)) };
    });
    const writer = new SearchWriter(db, new RequestStrings(db));
    planned.forEach(({ row, rowid, entries }, i) => {
      options.between?.(i);
      options.insert?.(row, rowid);
      term = writer.writeRow(rowid, row.org_id, entries.newTerms, entries.tokens, term);
    });
    const { shares, filled, filledRows } = planner.takeChanges();
    writer.writeChanges(shares, filled, filledRows);
    writer.finish(planner.takeCounts());
  })();
}
