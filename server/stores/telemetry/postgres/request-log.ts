import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import { migratePostgres, openPool } from '../../postgres.js';
import { REQUEST_COLUMNS, type RequestRecord } from '../request-record.js';
import { RollupSums } from '../rollup-sums.js';
import { ROLLUP_TABLES, rollupRows, type RollupRow, type RollupTable } from '../rollup-writer.js';

/**
 * The request-log store on PostgreSQL (migrations-postgres/): the rows, their rollups and the
 * spend outbox, as on SQLite, in a database every replica shares. Rows are written with their
 * rollups and their spend in one transaction, as on SQLite; replicas write at once, so each
 * writer upserts the cells in one order (by table, then by key) and two writers adding to the
 * same cells wait for each other instead of deadlocking.
 */

type PgType = 'text' | 'int4' | 'int8' | 'float8' | 'bytea';

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
  user_agent: 'text',
  metadata: 'text',
};

/** A rollup column's type; the rest are counts and sums of integers. */
const ROLLUP_TYPES: Record<string, PgType> = {
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
const ROWS_PER_STATEMENT = 2_000;

/** `INSERT INTO table (columns) SELECT * FROM unnest($1::type[], …)`: one array per column. */
function insertFromArrays(table: string, columns: readonly string[], types: readonly PgType[]): string {
  const arrays = types.map((type, i) => `$${i + 1}::${type}[]`).join(', ');
  return `INSERT INTO ${table} AS t (${columns.join(', ')}) SELECT * FROM unnest(${arrays})`;
}

const INSERT_REQUESTS = `${insertFromArrays(
  'requests',
  REQUEST_COLUMNS,
  REQUEST_COLUMNS.map((column) => REQUEST_TYPES[column]),
)} ON CONFLICT (req_id) DO NOTHING RETURNING req_id`;

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
function byKey(keyColumns: number): (a: RollupRow, b: RollupRow) => number {
  return (a, b) => {
    for (let c = 0; c < keyColumns; c++) {
      const x = a[c]!;
      const y = b[c]!;
      if (x !== y) return x < y ? -1 : 1;
    }
    return 0;
  };
}

/** Rows' values by column, for `unnest`. */
function columnsOf<T>(rows: readonly T[], width: number, value: (row: T, column: number) => unknown): unknown[][] {
  return Array.from({ length: width }, (_, c) => rows.map((row) => value(row, c)));
}

/** What a write did: written and its spend recorded, or nothing, for a request id already stored. */
export type RequestLogWrite =
  | { written: number; settlement: string | null; repeated?: undefined }
  | { repeated: RequestRecord; written?: undefined };

/** One entry of the spend outbox: what a commit's rows cost one key. */
export interface OutboxEntry {
  key_id: string;
  micro: number;
}

export class PgRequestLog {
  private constructor(private readonly pool: pg.Pool) {}

  static async open(url: string): Promise<PgRequestLog> {
    const pool = openPool(url, { applicationName: 'gateway-console telemetry' });
    try {
      await migratePostgres(pool, 'telemetry', new URL('../migrations-postgres/', import.meta.url));
      return new PgRequestLog(pool);
    } catch (error) {
      await pool.end();
      throw error;
    }
  }

  /**
   * Writes `records`, their rollups and the spend they add (in the outbox, under the returned
   * settlement id: null when they cost nothing) in one transaction. A request id already stored,
   * or repeated among `records`, writes nothing and is returned, unless `skipStored`: then only
   * the rows not stored yet are written, and only they count in the rollups and the spend.
   */
  async write(records: readonly RequestRecord[], { skipStored = false } = {}): Promise<RequestLogWrite> {
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      const fresh = await this.insertRows(client, records);
      const repeated = fresh.length < records.length && !skipStored ? firstRepeated(records, fresh) : null;
      if (repeated) {
        await client.query('ROLLBACK');
        return { repeated };
      }
      await this.addRollups(client, fresh);
      const settlement = await recordSpend(client, fresh);
      await client.query('COMMIT');
      return { written: fresh.length, settlement };
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    } finally {
      client.release();
    }
  }

  /** The spend outbox, as server/ingest/spend-outbox.ts settles it. */
  async entries(settlement: string): Promise<OutboxEntry[]> {
    const found = await this.pool.query<OutboxEntry>(
      'SELECT key_id, micro FROM spend_outbox WHERE settlement = $1 ORDER BY key_id',
      [settlement],
    );
    return found.rows;
  }

  async forget(settlement: string): Promise<void> {
    await this.pool.query('DELETE FROM spend_outbox WHERE settlement = $1', [settlement]);
  }

  async pending(): Promise<string[]> {
    const found = await this.pool.query<{ settlement: string }>('SELECT DISTINCT settlement FROM spend_outbox');
    return found.rows.map((row) => row.settlement);
  }

  close(): Promise<void> {
    return this.pool.end();
  }

  /** Inserts the rows not stored yet; returns those it inserted, in order. */
  private async insertRows(client: pg.PoolClient, records: readonly RequestRecord[]): Promise<RequestRecord[]> {
    const fresh: RequestRecord[] = [];
    for (let at = 0; at < records.length; at += ROWS_PER_STATEMENT) {
      const chunk = records.slice(at, at + ROWS_PER_STATEMENT);
      const values = columnsOf(chunk, REQUEST_COLUMNS.length, (record, c) => record[REQUEST_COLUMNS[c]!]);
      const inserted = await client.query<{ req_id: string }>({
        name: 'insert_requests',
        text: INSERT_REQUESTS,
        values,
      });
      const ids = new Set(inserted.rows.map((row) => row.req_id));
      // The first of two rows with one id is the one inserted.
      for (const record of chunk) if (ids.delete(record.req_id)) fresh.push(record);
    }
    return fresh;
  }

  private async addRollups(client: pg.PoolClient, records: readonly RequestRecord[]): Promise<void> {
    const sums = new RollupSums();
    for (const record of records) sums.add(record);
    const cells = sums.take();
    if (!cells) return;
    const rows = rollupRows(cells);
    for (const [index, table] of ROLLUP_TABLES.entries()) {
      const cellRows = rows[index]!.sort(byKey(table.keyColumns));
      for (let at = 0; at < cellRows.length; at += ROWS_PER_STATEMENT) {
        const chunk = cellRows.slice(at, at + ROWS_PER_STATEMENT);
        const values = columnsOf(chunk, table.columns.length, (row, c) => row[c]);
        await client.query({ name: `upsert_${table.name}`, text: UPSERTS[index]!, values });
      }
    }
  }
}

/** The first record whose id was not inserted (stored already, or earlier in `records`). */
function firstRepeated(records: readonly RequestRecord[], fresh: readonly RequestRecord[]): RequestRecord {
  const inserted = new Set(fresh);
  return records.find((record) => !inserted.has(record))!;
}

/** Writes what `records` cost each key into the outbox; returns the settlement id, or null when they cost nothing. */
async function recordSpend(client: pg.PoolClient, records: readonly RequestRecord[]): Promise<string | null> {
  const spend = new Map<string, number>();
  for (const { key_id: keyId, cost_micro: cost } of records) {
    if (keyId !== null) spend.set(keyId, (spend.get(keyId) ?? 0) + cost);
  }
  const owed = [...spend].filter(([, micro]) => micro !== 0);
  if (owed.length === 0) return null;
  const settlement = randomUUID();
  await client.query(
    'INSERT INTO spend_outbox (settlement, key_id, micro) SELECT $1, * FROM unnest($2::text[], $3::int8[])',
    [settlement, owed.map(([keyId]) => keyId), owed.map(([, micro]) => micro)],
  );
  return settlement;
}
