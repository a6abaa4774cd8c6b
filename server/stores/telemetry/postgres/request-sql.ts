import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import { REQUEST_COLUMNS, type RequestRecord } from '../request-record.js';
import { ROLLUP_TABLES, type RollupRow, type RollupRows, type RollupTable } from '../rollup-writer.js';

/**
 * The request log's writes on PostgreSQL, shared by a write of rows held in memory
 * (request-log.ts) and an import (request-import.ts): rows in as one array per column
 * (`unnest`), cells upserted in one order (by table, then by key) so that two writers adding to
 * the same cells wait for each other instead of deadlocking, spend into the outbox.
 */
export type PgType = 'text' | 'int4' | 'int8' | 'float8' | 'bytea';

const REQUEST_TYPES: { [C in (typeof REQUEST_COLUMNS)[number]]: PgType } = {
  req_id: 'text',
  ts: 'int8',
  org_id: 'text',
  project_id: 'text',
  key_id: 'text',
  model: 'text',
  status: 'int4',
  stream: 'int4',
  total_ms: 'float8',
  ttft_ms: 'float8',
  tpot_ms: 'float8',
  pre_dispatch_ms: 'float8',
  prompt_tokens: 'int8',
  tokens_generated: 'int8',
  cache_creation_input_tokens: 'int8',
  cache_read_input_tokens: 'int8',
  total_tokens: 'int8',
  tokens_estimated: 'int4',
  cost_micro: 'int8',
  is_byok: 'int4',
  termination_reason: 'text',
  upstream_error: 'text',
  upstream_model: 'text',
  served_by: 'text',
  attempts: 'text',
  api: 'text',
  user_agent: 'text',
  metadata: 'text',
};

/** A rollup column's type; the rest are counts and sums of integers. */
export const ROLLUP_TYPES: Record<string, PgType> = {
  org_id: 'text',
  project_id: 'text',
  key_id: 'text',
  model: 'text',
  value: 'text',
  termination_reason: 'text',
  dim: 'int4',
  status_class: 'int4',
  total_ms: 'float8',
  ttft_ms: 'float8',
  speed_ms: 'float8',
  latency: 'bytea',
  ttft: 'bytea',
};

/** Rows a statement takes at most: its arrays are one parameter each, whatever their length. */
export const ROWS_PER_STATEMENT = 2_000;

/** `INSERT INTO table (columns) SELECT * FROM unnest($1::type[], …)`: one array per column. */
export function insertFromArrays(table: string, columns: readonly string[], types: readonly PgType[]): string {
  const arrays = types.map((type, i) => `$${i + 1}::${type}[]`).join(', ');
  return `INSERT INTO ${table} AS t (${columns.join(', ')}) SELECT * FROM unnest(${arrays})`;
}

/** A batch's search columns (search-columns.ts), in its rows' order. */
export interface SearchColumns {
  /** `search_set`: the id of the set of the row's common strings, null when it holds none. */
  sets: (number | null)[];
  /** `search_rare`: its request id and its other strings, casefolded. */
  rare: string[];
}

/** A request row's columns on PostgreSQL: the record's, then its search columns. */
export const REQUEST_ROW_COLUMNS = [...REQUEST_COLUMNS, 'search_set', 'search_rare'];

/**
 * The rows' columns, then their search columns: each id into `request_ids` first, which keeps
 * ids unique across the day tables (migrations-postgres/007), and the rows whose ids went in into
 * `requests`. Of two rows with one id, the first is the one inserted.
 */
const INSERT_REQUESTS = (() => {
  const types = [...REQUEST_COLUMNS.map((column) => REQUEST_TYPES[column]), 'int8', 'text'];
  const arrays = types.map((type, i) => `$${i + 1}::${type}[]`).join(', ');
  const columns = REQUEST_ROW_COLUMNS.join(', ');
  return `WITH given AS (
      SELECT DISTINCT ON (req_id) * FROM unnest(${arrays}) WITH ORDINALITY AS g (${columns}, n) ORDER BY req_id, n),
    ids AS (
      INSERT INTO request_ids (req_id, ts) SELECT req_id, ts FROM given ON CONFLICT DO NOTHING RETURNING req_id)
    INSERT INTO requests (${columns})
      SELECT ${REQUEST_ROW_COLUMNS.map((column) => `given.${column}`).join(', ')}
      FROM given JOIN ids ON ids.req_id = given.req_id COLLATE "C"
    RETURNING req_id`;
})();

function upsertSql(table: RollupTable): string {
  const types = table.columns.map((column) => ROLLUP_TYPES[column] ?? 'int8');
  const set = [
    ...table.sums.map((m) => `${m} = t.${m} + excluded.${m}`),
    ...table.sketches.map((m) => `${m} = sketch_merge(t.${m}, excluded.${m})`),
    // GREATEST ignores nulls: the stored time stays when the new rows have none.
    ...table.latest.map((m) => `${m} = GREATEST(t.${m}, excluded.${m})`),
  ];
  const key = table.columns.slice(0, table.keyColumns).join(', ');
  return `${insertFromArrays(table.name, table.columns, types)} ON CONFLICT (${key}) DO UPDATE SET ${set.join(', ')}`;
}

const UPSERTS = ROLLUP_TABLES.map(upsertSql);

/** Orders cells by their key: the same order in every writer is what keeps them from deadlocking. */
export function byKey(keyColumns: number): (a: RollupRow, b: RollupRow) => number {
  return (a, b) => {
    for (let c = 0; c < keyColumns; c++) {
      const x = a[c]!;
      const y = b[c]!;
      if (x === y) continue;
      // Text by its UTF-8 bytes, as the columns' "C" collation orders it (an import's merge sorts
      // there): JavaScript's own order, by UTF-16 units, puts U+E000-U+FFFF after emoji.
      if (typeof x === 'string' && typeof y === 'string') return Buffer.compare(Buffer.from(x), Buffer.from(y));
      return x < y ? -1 : 1;
    }
    return 0;
  };
}

/**
 * A string as PostgreSQL text can hold it: without U+0000, which it refuses (SQLite keeps it). A
 * model name sent with one would otherwise fail its whole batch of rows, again and again.
 */
export const storableText = (text: string): string =>
  text.includes('\u0000') ? text.replaceAll('\u0000', '\uFFFD') : text;
const storable = (value: unknown) => (typeof value === 'string' ? storableText(value) : value);

/** A record with its text as PostgreSQL stores it: itself when it holds no U+0000, as nearly every one. */
export function storableRecord(record: RequestRecord): RequestRecord {
  const texts = REQUEST_COLUMNS.filter(
    (column) => typeof record[column] === 'string' && (record[column] as string).includes('\u0000'),
  );
  if (texts.length === 0) return record;
  const copy: Record<string, unknown> = { ...record };
  for (const column of texts) copy[column] = storableText(record[column] as string);
  return copy as unknown as RequestRecord;
}

/** Columns of values with their strings made storable. */
export function storableColumns(values: unknown[][]): unknown[][] {
  return values.map((column) => (column.some((value) => typeof value === 'string') ? column.map(storable) : column));
}

/** Rows' values by column, for `unnest`. */
export function columnsOf<T>(
  rows: readonly T[],
  width: number,
  value: (row: T, column: number) => unknown,
): unknown[][] {
  return Array.from({ length: width }, (_, c) => rows.map((row) => value(row, c)));
}

/** Records' values by column, in `REQUEST_COLUMNS` order. */
export function requestColumns(records: readonly RequestRecord[]): unknown[][] {
  return columnsOf(records, REQUEST_COLUMNS.length, (record, c) => record[REQUEST_COLUMNS[c]!]);
}

/**
 * Inserts rows given by column (`REQUEST_COLUMNS` order), with their search columns, whose ids are
 * not stored; returns the ids inserted, as stored (`storableText`).
 */
export async function insertRequests(
  client: pg.ClientBase,
  values: unknown[][],
  search: SearchColumns,
): Promise<Set<string>> {
  const inserted = await client.query<{ req_id: string }>({
    name: 'insert_requests',
    text: INSERT_REQUESTS,
    values: [...storableColumns(values), search.sets, search.rare],
  });
  return new Set(inserted.rows.map((row) => row.req_id));
}

/** Adds cells to the rollup tables, table by table, each table's cells in key order. */
export async function upsertCells(client: pg.ClientBase, rows: RollupRows): Promise<void> {
  for (const [index, table] of ROLLUP_TABLES.entries()) {
    const cellRows = rows[index]!.sort(byKey(table.keyColumns));
    for (let at = 0; at < cellRows.length; at += ROWS_PER_STATEMENT) {
      const chunk = cellRows.slice(at, at + ROWS_PER_STATEMENT);
      const values = storableColumns(columnsOf(chunk, table.columns.length, (row, c) => row[c]));
      await client.query({ name: `upsert_${table.name}`, text: UPSERTS[index]!, values });
    }
  }
}

/** Writes `spend` into the outbox; returns its settlement id, or null when it costs nothing. */
export async function recordSpend(client: pg.ClientBase, spend: ReadonlyMap<string, number>): Promise<string | null> {
  const owed = [...spend].filter(([, micro]) => micro !== 0);
  if (owed.length === 0) return null;
  const settlement = randomUUID();
  await client.query(
    'INSERT INTO spend_outbox (settlement, key_id, micro) SELECT $1, * FROM unnest($2::text[], $3::int8[])',
    [settlement, owed.map(([keyId]) => keyId), owed.map(([, micro]) => micro)],
  );
  return settlement;
}

/**
 * Rolls the client's transaction back; returns the rollback's error, with which the client is to
 * be released (closed, not handed back with its transaction open), or undefined.
 */
export function rollBack(client: pg.ClientBase): Promise<Error | undefined> {
  return client.query('ROLLBACK').then(
    () => undefined,
    (error: Error) => error,
  );
}
