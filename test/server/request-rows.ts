import { randomUUID } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Database } from 'better-sqlite3';
import { beginImport, type ImportTransaction } from '../../server/stores/telemetry/import-transaction.js';
import { REQUEST_COLUMNS, type RequestRecord } from '../../server/stores/telemetry/request-record.js';
import { signEpochs, termText, TERM_SIGNATURES, type Signatures } from '../../server/stores/telemetry/search-terms.js';
import { TELEMETRY_MIGRATIONS } from '../../server/stores/telemetry/store.js';
import type { RequestApi } from '../../server/schemas/request-log.js';

/**
 * A request-log row in the `import-requests` shape: a successful streamed call a minute
 * ago costing 1 PKR, attributed to the key and project given. Top-level fields can be
 * overridden; pass `financials` to set the cost.
 */
export function importRow(keyId: string | null, projectId: string | null, overrides: Record<string, unknown> = {}) {
  return {
    req_id: `req-${randomUUID()}`,
    timestamp: new Date(Date.now() - 60_000).toISOString(),
    model: 'openai/gpt-4o-mini',
    status: 200,
    stream: true,
    key: keyId === null ? null : { id: keyId },
    project: projectId === null ? null : { id: projectId },
    metrics: {
      total_ms: 900,
      ttft_ms: 120,
      tpot_ms: 8.5,
      pre_dispatch_ms: 9,
      prompt_tokens: 100,
      tokens_generated: 90,
      cache_creation_input_tokens: null,
      cache_read_input_tokens: null,
      total_tokens: 190,
      tokens_estimated: false,
    },
    financials: { cost_pkr: 1, is_byok: 0 },
    status_detail: { termination_reason: 'success', upstream_error: null },
    upstream: { model: 'gpt-4o-mini-2024-07-18' },
    user_agent: 'gateway-test/1.0',
    metadata: { 'Run-Id': 'abc' },
    ...overrides,
  };
}

/** Writes an NDJSON file in `folder`, objects as JSON and strings as they are, and returns its path. */
export function ndjsonFile(folder: string, lines: (object | string)[]): string {
  const path = join(folder, `requests-${randomUUID()}.ndjson`);
  writeFileSync(path, lines.map((line) => (typeof line === 'string' ? line : JSON.stringify(line))).join('\n') + '\n');
  return path;
}

/** The columns later migrations added to the request log (011: served_by, attempts; 012: api). */
const ADDED_COLUMNS: readonly string[] = ['served_by', 'attempts', 'api'];

/** The request log's columns as its first migration made them: later ones added the rest. */
export const COLUMNS_OF_001 = REQUEST_COLUMNS.filter((column) => !ADDED_COLUMNS.includes(column));

/**
 * Undoes migrations 024, 021, 017, 016 and 015 of a SQLite store (rows' own texts found through
 * the rows, terms read from their rows, request ids in bytes, the search terms' organisation
 * codes, the request log's rows coded behind a view): the terms and rows go back into tables as
 * 014 left them, every value and rowid kept. A row's own texts (its request id, its trace id)
 * become terms again, numbered after the others.
 */
export function uncodeRequests(db: Database): void {
  // As 017 stored them: a byte for the kind (1 after `req_`), then the digits' bytes.
  db.exec(`INSERT INTO search_terms (org_code, text, row)
      SELECT org_code, unhex('01' || hex(req_id)), id FROM request_rows WHERE typeof(req_id) = 'blob' ORDER BY id;
    INSERT INTO search_terms (org_code, text, row)
      SELECT org_code, unhex('00' || hex(own)), id FROM (
        SELECT org_code, id, COALESCE(metadata_hex, CASE WHEN typeof(metadata) = 'text' THEN metadata_hex(metadata) END) AS own
        FROM request_rows)
      WHERE own IS NOT NULL ORDER BY id;
    DROP TABLE search_row_signatures;
    DROP TABLE search_row_epochs;`);
  db.exec(`CREATE TABLE search_terms_before (
      id INTEGER PRIMARY KEY, org_id TEXT NOT NULL, text TEXT NOT NULL, row INTEGER NOT NULL,
      shared INTEGER NOT NULL DEFAULT 0 CHECK (shared IN (0, 1)));
    INSERT INTO search_terms_before SELECT search_terms.id, s.text, ${termText('search_terms.text', 'search_terms.row')}, search_terms.row, search_terms.shared
      FROM search_terms JOIN request_strings s ON s.code = search_terms.org_code;
    DROP TABLE search_terms;
    ALTER TABLE search_terms_before RENAME TO search_terms;`);
  const create = /CREATE TABLE requests \([\s\S]*?\n\);/.exec(
    readFileSync(new URL('001_request_log.sql', TELEMETRY_MIGRATIONS), 'utf8'),
  )![0];
  const columns = [...COLUMNS_OF_001, ...ADDED_COLUMNS].join(', ');
  db.exec(`${create.replace('CREATE TABLE requests', 'CREATE TABLE requests_before')};
    ${ADDED_COLUMNS.map((column) => `ALTER TABLE requests_before ADD COLUMN ${column} TEXT;`).join('\n')}
    INSERT INTO requests_before (rowid, ${columns}) SELECT rowid, ${columns} FROM requests ORDER BY rowid;
    DROP VIEW requests; DROP VIEW requests_unindexed; DROP TABLE request_rows; DROP TABLE request_strings;
    DROP TABLE request_text_ids;
    ALTER TABLE requests_before RENAME TO requests;
    CREATE INDEX requests_by_key ON requests (key_id, ts);
    CREATE INDEX requests_by_org ON requests (org_id, ts, req_id);
    CREATE INDEX requests_by_cost ON requests (org_id, cost_micro, ts);`);
}

/**
 * Undoes migrations 011, 012 and 015 of a SQLite store (the request log's added columns, and its
 * coded rows), as a test that takes a store back to an earlier version must.
 */
export function dropAddedColumns(db: Database): void {
  uncodeRequests(db);
  for (const column of ADDED_COLUMNS) db.exec(`ALTER TABLE requests DROP COLUMN ${column}`);
}

/** A generator of numbers in [0, 1), the same on every run for a seed (tests' random rows, reproducible). */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state * 1_664_525 + 1_013_904_223) >>> 0;
    return state / 2 ** 32;
  };
}

/** A stored request-log row, numbered `i`: its request id and time follow from the number. */
export const requestRecord = (i: number): RequestRecord => ({
  req_id: `req-${i}`,
  ts: 1_700_000_000_000 + i,
  org_id: 'org-a',
  project_id: null,
  key_id: null,
  model: 'openai/gpt-4o-mini',
  status: 200,
  stream: 0,
  total_ms: 100,
  ttft_ms: null,
  tpot_ms: null,
  pre_dispatch_ms: 1,
  prompt_tokens: 10,
  tokens_generated: 5,
  cache_creation_input_tokens: null,
  cache_read_input_tokens: null,
  total_tokens: 15,
  tokens_estimated: 0,
  cost_micro: 1_000,
  is_byok: 0,
  termination_reason: 'completed',
  upstream_error: null,
  upstream_model: null,
  served_by: null,
  attempts: null,
  api: null,
  user_agent: 'agent/1.0',
  metadata: '{}',
});

/**
 * Takes the store `db` as an import from a file does, alone, and writes 20,000 rows from
 * req-`from` on through a cache of a few pages: they spill into the file, as a large import's
 * do, and the import holds the store's exclusive lock. Returns without committing.
 */
export function spillRowsAlone(db: Database, from = 1): ImportTransaction {
  db.pragma('cache_size = 16');
  const transaction = beginImport(db, { withRows: true });
  if (!transaction.alone) throw new Error('the import did not have the store to itself');
  insertRows(db, 20_000, from);
  return transaction;
}

/** Writes `count` request rows straight into the store, req-`from` on, with no rollups or search terms. */
export function insertRows(db: Database, count: number, from = 1): void {
  db.prepare(
    `WITH RECURSIVE n(i) AS (SELECT ? UNION ALL SELECT i + 1 FROM n WHERE i < ?)
    INSERT INTO requests (req_id, ts, org_id, model, status, stream, total_ms, pre_dispatch_ms, tokens_generated,
      total_tokens, tokens_estimated, cost_micro, is_byok, termination_reason, user_agent, metadata)
    SELECT 'req-' || i, 1700000000000 + i, 'org-a', 'openai/gpt-4o-mini', 200, 0, 100, 1, 5, 15, 0, 1000, 0,
      'completed', 'agent/1.0', '{}' FROM n`,
  ).run(from, from + count - 1);
}

const DAY = 86_400_000;
/** The first day of `variedRecord`'s rows. */
export const VARIED_START = Date.parse('2026-11-02T00:00:00Z');

/** The APIs of `variedRecord`'s rows (a twelfth of them unknown), chat completions the most. */
const VARIED_APIS: readonly RequestApi[] = [
  'chat',
  'chat',
  'messages',
  'responses',
  'embeddings',
  'chat',
  'count_tokens',
];

/** Row `i`'s attempts as stored: a failure and a move to the next target for some, then the last. */
function variedAttempts(i: number, status: number): string {
  const last = {
    target: 'prov/model-2026',
    status,
    error: status === 200 ? null : 'server_error',
    ms: (i % 50) * 2.5,
    decision: status === 200 ? 'served' : 'gave_up',
  };
  const failed = { target: 'other/model-β', status: null, error: 'first_byte_timeout', ms: 1000.5, decision: 'next' };
  return JSON.stringify(i % 3 === 0 ? [failed, last] : [last]);
}

/**
 * Row `i`: spread over three days with many rows to a cell, two organisations, null projects and
 * keys, failures of every kind, unknown first tokens and cache fields. Durations are halves, so
 * their sums are exact in any order and the stores must agree to the bit.
 */
export function variedRecord(i: number, keys: readonly string[] = ['k-a', 'k-b', 'k-c']): RequestRecord {
  const status = [200, 200, 200, 429, 503, 400, 200][i % 7]!;
  return {
    req_id: `req-${String(i).padStart(6, '0')}`,
    ts: VARIED_START + ((i * 7_919_000) % (3 * DAY)) + (i % 13) * 1_000,
    org_id: i % 11 === 0 ? 'org-other' : 'org-main',
    project_id: i % 3 === 0 ? null : `p${i % 2}`,
    key_id: i % 5 === 0 ? null : keys[i % keys.length]!,
    model: ['openai/gpt-4o', 'svc/fast', 'anthropic/claude'][i % 3]!,
    status,
    stream: (i % 2) as 0 | 1,
    total_ms: (i % 90) * 100 + 0.5,
    ttft_ms: i % 4 === 1 ? null : (i % 40) * 1.5,
    tpot_ms: i % 6 === 0 ? null : 2.5,
    pre_dispatch_ms: 12.5,
    prompt_tokens: i % 9 === 0 ? null : 100 + (i % 17),
    tokens_generated: status === 200 ? 50 + (i % 23) : 0,
    cache_creation_input_tokens: i % 4 === 0 ? null : i % 7,
    cache_read_input_tokens: i % 4 === 0 ? null : (i * 3) % 50,
    total_tokens: 150 + (i % 40),
    tokens_estimated: (i % 8 === 0 ? 1 : 0) as 0 | 1,
    cost_micro: status === 200 ? 1_000 + (i % 97) * 13 : 0,
    is_byok: (i % 10 === 0 ? 1 : 0) as 0 | 1,
    termination_reason: status === 200 ? 'completed' : status === 429 ? 'rate_limited' : 'upstream_error',
    upstream_error: status === 503 || (status === 429 && i % 2 === 0) ? 'upstream said no' : null,
    upstream_model: i % 12 === 0 ? null : 'model-2026',
    served_by: i % 12 === 0 || status !== 200 ? null : 'prov/model-2026',
    attempts: i % 12 === 0 || i % 5 === 1 ? null : variedAttempts(i, status),
    api: i % 12 === 0 ? null : VARIED_APIS[i % VARIED_APIS.length]!,
    user_agent: 'agent/1.0',
    metadata: i % 3 === 0 ? '{}' : JSON.stringify({ run: `r${i % 4}`, 'trace-id': `t-${i}` }),
  };
}

/** A store's search signatures of `kind` (terms unless told), as written. */
export const signatures = (db: Database, kind: Signatures = TERM_SIGNATURES) =>
  db.prepare(`SELECT epoch, page, bits FROM ${kind.table} ORDER BY epoch, page`).raw().all() as [
    number,
    number,
    Buffer,
  ][];

/** The signatures `signEpochs` makes from the stored terms or rows alone (undone after). */
export function signedFromStore(db: Database, kind: Signatures = TERM_SIGNATURES) {
  db.exec('BEGIN');
  try {
    db.exec(`DELETE FROM ${kind.table}; DELETE FROM ${kind.epochs}`);
    signEpochs(db);
    return signatures(db, kind);
  } finally {
    db.exec('ROLLBACK');
  }
}
