import type pg from 'pg';
import { ROLLUP_TABLES, type RollupRows } from '../rollup-writer.js';
import {
  columnsOf,
  insertFromArrays,
  insertRequests,
  recordSpend,
  rollBack,
  ROLLUP_TYPES,
  ROWS_PER_STATEMENT,
  storableColumns,
} from './request-sql.js';

/** A table's cells as they are staged, then added up into the table (`merge`). */
const stage = (table: string) => `stage_${table}`;

/**
 * The staged cells of `table` summed by key, added to the table in key order: measures added,
 * sketches merged, the later time kept.
 */
function mergeSql(index: number): string {
  const table = ROLLUP_TABLES[index]!;
  const key = table.columns.slice(0, table.keyColumns);
  const summed = [
    ...key,
    ...table.sums.map((m) => `SUM(${m})`),
    ...table.sketches.map((m) => `sketch_sum(${m})`),
    ...table.latest.map((m) => `MAX(${m})`),
  ];
  const set = [
    ...table.sums.map((m) => `${m} = t.${m} + excluded.${m}`),
    ...table.sketches.map((m) => `${m} = sketch_merge(t.${m}, excluded.${m})`),
    ...table.latest.map((m) => `${m} = GREATEST(t.${m}, excluded.${m})`),
  ];
  const columns = [...key, ...table.sums, ...table.sketches, ...table.latest];
  return `INSERT INTO ${table.name} AS t (${columns.join(', ')})
    SELECT ${summed.join(', ')} FROM ${stage(table.name)} GROUP BY ${key.join(', ')} ORDER BY ${key.join(', ')}
    ON CONFLICT (${key.join(', ')}) DO UPDATE SET ${set.join(', ')}`;
}

/**
 * An import into the request log on PostgreSQL: one transaction for all its rows, so that a
 * source failing part-way writes nothing. Its cells arrive in parts (the reading thread sends
 * them as it holds enough) and the same cell may be in several: they are staged in temporary
 * tables and added to the rollups once, at the commit, each table in key order. So the import
 * holds no cell's lock until its last statements, and takes them in the order every writer
 * takes them: a long import never deadlocks with the gateways' writes beside it.
 */
export class PgImport {
  private done = false;

  private constructor(
    private readonly client: pg.PoolClient,
    private readonly committed: () => void,
  ) {}

  static async begin(client: pg.PoolClient, committed: () => void): Promise<PgImport> {
    try {
      await client.query('BEGIN');
      for (const table of ROLLUP_TABLES) {
        await client.query(
          `CREATE TEMPORARY TABLE ${stage(table.name)} (LIKE ${table.name} INCLUDING DEFAULTS) ON COMMIT DROP`,
        );
      }
      return new PgImport(client, committed);
    } catch (error) {
      await rollBack(client);
      client.release(error as Error);
      throw error;
    }
  }

  /** Inserts rows given by column (`REQUEST_COLUMNS` order); returns the ids inserted (not stored before). */
  insert(values: unknown[][]): Promise<Set<string>> {
    return insertRequests(this.client, values);
  }

  async stage(rows: RollupRows): Promise<void> {
    for (const [index, table] of ROLLUP_TABLES.entries()) {
      const types = table.columns.map((column) => ROLLUP_TYPES[column] ?? 'int8');
      const cells = rows[index]!;
      for (let at = 0; at < cells.length; at += ROWS_PER_STATEMENT) {
        const chunk = cells.slice(at, at + ROWS_PER_STATEMENT);
        // Not a named statement: each import's staging tables are new ones.
        await this.client.query({
          text: insertFromArrays(stage(table.name), table.columns, types),
          values: storableColumns(columnsOf(chunk, table.columns.length, (row, c) => row[c])),
        });
      }
    }
  }

  /** Adds the staged cells to the rollups and `spend` to the outbox, and commits; returns the settlement id. */
  async commit(spend: ReadonlyMap<string, number>): Promise<string | null> {
    for (const index of ROLLUP_TABLES.keys()) await this.client.query(mergeSql(index));
    const settlement = await recordSpend(this.client, spend);
    await this.client.query('COMMIT');
    this.done = true;
    this.committed();
    // Statistics for the rows just added, so that the next queries are planned for them rather
    // than for the store before the import (autovacuum comes to it, but a minute or more later).
    // The rows are committed: a failure here changes nothing but the plans until then.
    await this.client
      .query(`ANALYZE requests, ${ROLLUP_TABLES.map((table) => table.name).join(', ')}`)
      .catch(() => undefined);
    return settlement;
  }

  /** Rolls back what is not committed, and gives the connection back. */
  async close(): Promise<void> {
    if (this.done) {
      this.client.release();
      return;
    }
    this.done = true;
    this.client.release(await rollBack(this.client));
  }
}
