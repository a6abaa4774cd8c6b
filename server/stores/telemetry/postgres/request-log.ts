import { setTimeout as sleep } from 'node:timers/promises';
import type pg from 'pg';
import { migratePostgres, openPool } from '../../postgres.js';
import type { TelemetryReads } from '../open.js';
import type { RequestRecord } from '../request-record.js';
import { RollupSums } from '../rollup-sums.js';
import { ROLLUP_TABLES, rollupRows } from '../rollup-writer.js';
import {
  type DayTable,
  dayTables,
  dayTablesMigration,
  markDroppingSql,
  isMissingDay,
  type MigrationLog,
  organisationsIn,
  RequestDays,
} from './request-days.js';
import { PgImport } from './request-import.js';
import { addHoursSql, SearchHours, SearchTerms } from './search-columns.js';
import {
  insertRequests,
  recordSpend,
  requestColumns,
  ROWS_PER_STATEMENT,
  rollBack,
  storableRecord,
  upsertCells,
} from './request-sql.js';

/**
 * The request-log store on PostgreSQL (migrations-postgres/): the rows, their rollups and the
 * spend outbox, as on SQLite, in a database every replica shares. Rows are written with their
 * rollups and their spend in one transaction, as on SQLite (request-sql.ts).
 */

/** What a write did: written and its spend recorded, or nothing, for a request id already stored. */
export type RequestLogWrite =
  | { written: number; settlement: string | null; repeated?: undefined }
  | { repeated: RequestRecord; written?: undefined };

/** One entry of the spend outbox: what a commit's rows cost one key. */
export interface OutboxEntry {
  key_id: string;
  micro: number;
}

/**
 * How long a key list's last uses are kept. Other replicas' rows are seen after at most this
 * long; this server's own writes forget them at once.
 */
const LAST_USED_MS = 1_000;

/**
 * How long a write waits for a day table being dropped to be gone before it fails (the drop's
 * detach waits for the reads begun before it), and its first pause between tries.
 */
const DAY_DROP_WAIT_MS = 30_000;
const DAY_DROP_POLL_MS = 25;
/** The most a day table's drop waits for a write there; longer, the table is left to the next sweep. */
const LOCK_WAIT = '100ms';
/** PostgreSQL's `lock_timeout` expired. */
const LOCK_NOT_AVAILABLE = '55P03';

export class PgRequestLog implements TelemetryReads {
  private lastUsed = new Map<string, { at: number; byKey: Map<string, number> }>();
  private readonly idLists = new WeakMap<readonly { id: string }[], string[]>();
  /** Which strings this server's writes and imports found common (search-columns.ts). */
  private readonly terms = new SearchTerms();
  /** The day tables this server knows exist (request-days.ts). */
  private readonly days = new RequestDays();

  private constructor(private readonly pool: pg.Pool) {}

  /**
   * `connections`: the most the store opens (a writer of one batch at a time needs one, an import
   * two); `log`: where a migration that holds the request log for long says so.
   */
  static async open(
    url: string,
    { connections = 4, log }: { connections?: number; log?: MigrationLog } = {},
  ): Promise<PgRequestLog> {
    const pool = openPool(url, { max: connections, applicationName: 'gateway-console telemetry' });
    try {
      const dayTables = dayTablesMigration(log);
      await migratePostgres(
        pool,
        'telemetry',
        new URL('../migrations-postgres/', import.meta.url),
        { 7: dayTables.after },
        { 7: dayTables.before },
      );
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
  async write(given: readonly RequestRecord[], { skipStored = false } = {}): Promise<RequestLogWrite> {
    const deadline = Date.now() + DAY_DROP_WAIT_MS;
    for (let attempt = 0; ; attempt += 1) {
      try {
        return await this.writeOnce(given, skipStored);
      } catch (error) {
        // A day table dropped, or being dropped, by a server's retention after this one knew it:
        // made again once it is gone. The first time at once (long gone), then waiting for the drop.
        if (!isMissingDay(error) || Date.now() >= deadline) throw error;
        this.days.forget();
        if (attempt > 0) await sleep(Math.min(DAY_DROP_POLL_MS * 2 ** attempt, 500));
      }
    }
  }

  private async writeOnce(given: readonly RequestRecord[], skipStored: boolean): Promise<RequestLogWrite> {
    // Text as it is stored before anything is summed or sorted: cells are keyed, and ordered, by it.
    const records = given.map(storableRecord);
    const client = await this.pool.connect();
    let failed: Error | undefined;
    try {
      await this.days.ensure(
        client,
        records.map((record) => record.ts),
      );
      // Numbered before the transaction, each statement committed at once (SearchTerms).
      const search = await this.terms.columns(
        records.map((record) => record.org_id),
        records.map((record) => record.req_id),
        records.map((record) => record.metadata),
        (text, values) => client.query(text, values),
      );
      await client.query('BEGIN');
      const fresh: RequestRecord[] = [];
      const hours = new SearchHours();
      for (let at = 0; at < records.length; at += ROWS_PER_STATEMENT) {
        const chunk = records.slice(at, at + ROWS_PER_STATEMENT);
        const sets = search.sets.slice(at, at + ROWS_PER_STATEMENT);
        const inserted = await insertRequests(client, requestColumns(chunk), {
          sets,
          rare: search.rare.slice(at, at + ROWS_PER_STATEMENT),
        });
        // The first of two rows with one id is the one inserted.
        chunk.forEach((record, i) => {
          if (!inserted.delete(record.req_id)) return;
          fresh.push(record);
          hours.add(record.org_id, sets[i]!, record.ts);
        });
      }
      const repeated = fresh.length < records.length && !skipStored ? firstRepeated(records, fresh) : -1;
      if (repeated >= 0) {
        await client.query('ROLLBACK');
        return { repeated: given[repeated]! };
      }
      const sums = new RollupSums();
      for (const record of fresh) sums.add(record);
      const cells = sums.take();
      if (cells) await upsertCells(client, rollupRows(cells));
      if (hours.size > 0) await client.query({ name: 'add_search_hours', text: addHoursSql(), values: hours.take() });
      const settlement = await recordSpend(client, spendOf(fresh));
      await client.query('COMMIT');
      this.forgetReads();
      return { written: fresh.length, settlement };
    } catch (error) {
      failed = await rollBack(client);
      throw error;
    } finally {
      client.release(failed);
    }
  }

  /**
   * Deletes at most `limit` of an organisation's rows older than `before` (epoch ms, a whole
   * hour), in one short transaction, and says how many went; rollups and spend stay, as on
   * SQLite (expire-rows.ts). The last batch also drops the search's hourly counts before
   * `before`: no read reaches past the horizon, and its rows are gone.
   */
  async expire(orgId: string, before: number, limit: number): Promise<number> {
    const client = await this.pool.connect();
    let failed: Error | undefined;
    try {
      await client.query('BEGIN');
      // Recorded first, as on SQLite (migrations-postgres/006): no row at or after it is deleted.
      await recordHorizons(client, [orgId], [before]);
      const removed = await client.query<{ rows: number }>({
        name: 'expire_rows',
        // requests_by_org (org_id, ts, req_id): the oldest rows first, each found again by its
        // key in its day's table; their ids go with them.
        text: `WITH oldest AS (
                 SELECT ts, req_id FROM requests WHERE org_id = $1 AND ts < $2 ORDER BY ts LIMIT $3),
               gone AS (
                 DELETE FROM requests AS r USING oldest AS o
                  WHERE r.org_id = $1 AND r.ts < $2 AND r.ts = o.ts AND r.req_id = o.req_id
                 RETURNING r.req_id),
               ids AS (DELETE FROM request_ids WHERE req_id IN (SELECT req_id FROM gone))
               SELECT COUNT(*)::int AS rows FROM gone`,
        values: [orgId, before, limit],
      });
      const rows = removed.rows[0]!.rows;
      if (rows < limit) {
        await client.query({
          name: 'expire_search_hours',
          text: 'DELETE FROM search_hours WHERE org_id = $1 AND hour < $2',
          values: [orgId, before],
        });
      }
      await client.query('COMMIT');
      if (rows > 0) this.forgetReads();
      return rows;
    } catch (error) {
      failed = await rollBack(client);
      throw error;
    } finally {
      client.release(failed);
    }
  }

  /**
   * Drops whole the day tables whose rows are all past their organisation's horizon
   * (`horizons`, epoch ms; an organisation not named keeps its rows), oldest first: each marked
   * to be dropped once no write is in flight there (`markDropping`), the rows' ids deleted a
   * stretch of the table at a time, then the table detached without holding up reads or writes
   * (CONCURRENTLY) and dropped. A drop stopped half-way is finished by the next, whatever the
   * horizons. Returns the days dropped and the rows they held.
   */
  async dropDays(horizons: ReadonlyMap<string, number>): Promise<{ days: number; rows: number }> {
    const latest = Math.max(...horizons.values());
    const dropped = { days: 0, rows: 0 };
    const client = await this.pool.connect();
    let failed: Error | undefined;
    try {
      for (const table of await dayTables(client)) {
        const begun = table.detaching || table.dropping;
        if (!begun && (table.to > latest || !(await markDropping(client, table, horizons)))) continue;
        const name = client.escapeIdentifier(table.name);
        dropped.rows += await deleteIdsOf(client, table.name);
        await client.query(
          `ALTER TABLE requests DETACH PARTITION ${name} ${table.detaching ? 'FINALIZE' : 'CONCURRENTLY'}`,
        );
        await client.query(`DROP TABLE ${name}`);
        dropped.days += 1;
      }
      return dropped;
    } catch (error) {
      failed = error as Error;
      throw error;
    } finally {
      client.release(failed);
      if (dropped.days > 0) {
        this.days.forget();
        this.forgetReads();
      }
    }
  }

  /**
   * Starts an import: one transaction for all its rows, whose cells are staged as they come and
   * added to the rollups at its commit (`PgImport`).
   */
  async beginImport(): Promise<PgImport> {
    return PgImport.begin(this.pool, this.terms, this.days, () => this.forgetReads());
  }

  /** Whether any rollup table holds a cell (with rows or without: left by hand). */
  async holdsCells(): Promise<boolean> {
    const found = ROLLUP_TABLES.map((table) => `EXISTS (SELECT 1 FROM ${table.name})`).join(' OR ');
    return (await this.pool.query<{ held: boolean }>(`SELECT ${found} AS held`)).rows[0]!.held;
  }

  /**
   * Records what a copied store no longer held whole (migrate-store): each organisation's retention
   * horizon, and where its fine rollup cells start (009_fine_cells.sql), so that reads here stop
   * where the copy's rows and cells do.
   */
  async recordCopiedBounds(horizons: ReadonlyMap<string, number>, fineFrom: number | null): Promise<void> {
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      if (horizons.size > 0) await recordHorizons(client, [...horizons.keys()], [...horizons.values()]);
      if (fineFrom !== null) {
        await client.query(
          `INSERT INTO fine_cells (id, since) VALUES (1, $1)
           ON CONFLICT (id) DO UPDATE SET since = GREATEST(fine_cells.since, excluded.since)`,
          [fineFrom],
        );
      }
      await client.query('COMMIT');
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    } finally {
      client.release();
    }
  }

  /** How many request rows the store holds. */
  async countRows(): Promise<number> {
    return (await this.pool.query<{ n: number }>('SELECT COUNT(*)::bigint AS n FROM requests')).rows[0]!.n;
  }

  /** Reads fail one by one instead (`lastUsedByKey` answers null, the analytics 503). */
  reachable(): boolean {
    return true;
  }

  async lastUsedByKey(keys: readonly { id: string }[]): Promise<Map<string, number> | null> {
    if (keys.length === 0) return new Map();
    let ids = this.idLists.get(keys);
    if (ids === undefined) this.idLists.set(keys, (ids = keys.map((key) => key.id)));
    const cacheKey = ids.join('\0');
    const kept = this.lastUsed.get(cacheKey);
    if (kept && performance.now() - kept.at < LAST_USED_MS) return kept.byKey;
    const generation = this.lastUsed;
    try {
      const found = await this.pool.query<{ key_id: string; last_used: number }>({
        name: 'last_used_by_key',
        // One probe of (key_id, ts) per key.
        text: `SELECT k.id AS key_id, (SELECT MAX(ts) FROM requests WHERE key_id = k.id) AS last_used
          FROM unnest($1::text[]) AS k (id)`,
        values: [ids],
      });
      const byKey = new Map<string, number>();
      for (const row of found.rows) if (row.last_used !== null) byKey.set(row.key_id, row.last_used);
      // Not kept when a write of this server's came while it was read.
      if (generation === this.lastUsed) {
        // Lists of keys change as keys do: the old ones are dropped now and then, all together.
        if (this.lastUsed.size >= 1_000) this.lastUsed.clear();
        this.lastUsed.set(cacheKey, { at: performance.now(), byKey });
      }
      return byKey;
    } catch {
      return null;
    }
  }

  /** Forgets what was read, after a write of this server's (its rows are to be seen at once). */
  forgetReads(): void {
    this.lastUsed = new Map();
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

  async close(): Promise<void> {
    await this.pool.end();
  }
}

/**
 * Marks `table` to be dropped (`DROPPING`) if every organisation with rows in it is past its
 * horizon, and records those horizons; says whether it did. The table is locked against writes
 * first, so that a row written there before the mark is counted and one after it is refused
 * (and written again once the table is gone: `write`); a write that holds the table longer than
 * `LOCK_WAIT` (an import) leaves it to the next sweep instead of being waited for.
 */
async function markDropping(
  client: pg.PoolClient,
  table: DayTable,
  horizons: ReadonlyMap<string, number>,
): Promise<boolean> {
  const name = client.escapeIdentifier(table.name);
  await client.query('BEGIN');
  try {
    await client.query(`SET LOCAL lock_timeout = '${LOCK_WAIT}'`);
    await client.query(`LOCK TABLE ${name} IN SHARE ROW EXCLUSIVE MODE`);
    const orgs = await organisationsIn(client, table.name);
    const past = orgs.map((org) => horizons.get(org) ?? -Infinity);
    if (past.some((horizon) => horizon < table.to)) {
      await client.query('ROLLBACK');
      return false;
    }
    await recordHorizons(client, orgs, past);
    await client.query(markDroppingSql(name));
    await client.query('COMMIT');
    return true;
  } catch (error) {
    await client.query('ROLLBACK');
    if ((error as { code?: string }).code === LOCK_NOT_AVAILABLE) return false;
    throw error;
  }
}

/** Blocks of a day table whose rows' ids are deleted in one statement: about 1,500 rows. */
const ID_BLOCKS = 200;

/** Deletes the ids of a day table's rows, a stretch of its blocks at a time; returns how many went. */
async function deleteIdsOf(client: pg.PoolClient, table: string): Promise<number> {
  const name = client.escapeIdentifier(table);
  const size = await client.query<{ blocks: number }>(
    "SELECT pg_relation_size($1::regclass) / current_setting('block_size')::int AS blocks",
    [name],
  );
  let deleted = 0;
  for (let at = 0; at < size.rows[0]!.blocks; at += ID_BLOCKS) {
    // A TID range scan: the stretch's rows alone are read.
    const gone = await client.query(
      `DELETE FROM request_ids WHERE req_id IN (
         SELECT req_id FROM ${name} WHERE ctid >= '(${at},0)'::tid AND ctid < '(${at + ID_BLOCKS},0)'::tid)`,
    );
    deleted += gone.rowCount ?? 0;
  }
  return deleted;
}

/** Records that organisations' rows before their horizons are deleted (or about to be): reads never reach past it again. */
async function recordHorizons(client: pg.ClientBase, orgIds: readonly string[], horizons: readonly number[]) {
  await client.query({
    name: 'record_retention_horizons',
    text: `INSERT INTO retention_horizons (org_id, horizon) SELECT * FROM unnest($1::text[], $2::int8[])
           ON CONFLICT (org_id) DO UPDATE SET horizon = GREATEST(retention_horizons.horizon, excluded.horizon)`,
    values: [orgIds, horizons],
  });
}

/** The index of the first record whose id was not inserted (stored already, or earlier in `records`). */
function firstRepeated(records: readonly RequestRecord[], fresh: readonly RequestRecord[]): number {
  const inserted = new Set(fresh);
  return records.findIndex((record) => !inserted.has(record));
}

/** What `records` cost each key. */
function spendOf(records: readonly RequestRecord[]): Map<string, number> {
  const spend = new Map<string, number>();
  for (const { key_id: keyId, cost_micro: cost } of records) {
    if (keyId !== null) spend.set(keyId, (spend.get(keyId) ?? 0) + cost);
  }
  return spend;
}
