import type pg from 'pg';
import { mergeEncoded } from '../latency-sketch.js';
import { ROLLUP_TABLES, type RollupRow, type RollupRows } from '../rollup-writer.js';
import { storableText } from './request-sql.js';

/**
 * An import into an empty request log on PostgreSQL, done as pg_restore does: the rows go into
 * the table with its primary key alone, and its other indexes are built from them at the end,
 * each one sort instead of an insert per row. Measured on a copy of a million rows: the rows with
 * every index 58 s; the same rows with the primary key alone about 4 s, and the five indexes built
 * after them 21 s, 16 of which the trigram index.
 *
 * Dropping an index needs `requests` to itself (ACCESS EXCLUSIVE) until the commit: a server's
 * reads of the request log and its gateways' writes wait for the import. So it is asked for only
 * when the table holds no rows (a first import, a copy by migrate-store), and taken only if no one
 * holds it within a second (nor refused to this role): else the import shares the table as any
 * other does. The drop is part of the import's transaction, so an import that fails leaves the
 * indexes as they were.
 */

/** How long an import waits for `requests` to itself before it shares the table instead. */
const LOCK_WAIT = '1s';

/** Memory for building the indexes again, above PostgreSQL's default of 64 MB (a gigabyte built the trigram index of a million rows no faster). */
const INDEX_BUILD_MEMORY = '256MB';

/** The definitions of the indexes of `requests` that no constraint owns (not its primary key). */
const SECONDARY_INDEXES = `SELECT c.relname AS name, pg_get_indexdef(c.oid) AS definition
  FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
  WHERE i.indrelid = 'requests'::regclass
    AND NOT EXISTS (SELECT 1 FROM pg_constraint k WHERE k.conindid = i.indexrelid)
  ORDER BY c.relname`;

/**
 * Takes `requests` alone for the transaction open on `client` if it holds no rows, and drops its
 * secondary indexes; returns their definitions, to build them again (`buildIndexes`), or null
 * when the table has rows or another transaction holds it (nothing changed then).
 */
export async function takeEmptyRequests(client: pg.ClientBase): Promise<string[] | null> {
  await client.query('SAVEPOINT empty_requests');
  try {
    // Asked without the lock first: waiting for it on a busy log would hold up its writers. In
    // the savepoint, so that a fallback lets go of the table (two imports keeping it would wait
    // for each other).
    if (!(await isEmpty(client))) {
      await client.query('ROLLBACK TO SAVEPOINT empty_requests');
      return null;
    }
    // SET LOCAL is undone with the savepoint when the table is not taken.
    await client.query(`SET LOCAL lock_timeout = '${LOCK_WAIT}'`);
    await client.query('LOCK TABLE requests IN ACCESS EXCLUSIVE MODE');
    // Rows may have come between the two.
    if (!(await isEmpty(client))) {
      await client.query('ROLLBACK TO SAVEPOINT empty_requests');
      return null;
    }
    const indexes = await client.query<{ name: string; definition: string }>(SECONDARY_INDEXES);
    for (const { name } of indexes.rows) await client.query(`DROP INDEX ${client.escapeIdentifier(name)}`);
    // Empty already: its day tables get new files in this transaction, as the ones it makes
    // do, so that COPY may write their rows frozen (copy-rows.ts). Without that, the VACUUM
    // after the commit, and the one autovacuum runs before the transaction ids wrap, each read
    // and write every page again.
    await client.query('TRUNCATE requests');
    await client.query('SET LOCAL lock_timeout TO DEFAULT');
    await client.query('RELEASE SAVEPOINT empty_requests');
    // A partitioned table's index is given as `ON ONLY requests`, which would build it for the
    // parent alone: built `ON requests`, it is built for every day table too.
    return indexes.rows.map((index) => index.definition.replace(' ON ONLY ', ' ON '));
  } catch (error) {
    // lock_not_available: the table is in use; deadlock_detected: another import asks for it
    // too; insufficient_privilege: this role does not own it. The import shares it then.
    if (!['55P03', '40P01', '42501'].includes((error as { code?: string }).code ?? '')) throw error;
    await client.query('ROLLBACK TO SAVEPOINT empty_requests');
    return null;
  }
}

async function isEmpty(client: pg.ClientBase): Promise<boolean> {
  const empty = await client.query<{ empty: boolean }>('SELECT NOT EXISTS (SELECT 1 FROM requests) AS empty');
  return empty.rows[0]!.empty;
}

/** Builds the indexes `takeEmptyRequests` dropped, in the same transaction. */
export async function buildIndexes(client: pg.ClientBase, definitions: readonly string[]): Promise<void> {
  await client.query(`SET LOCAL maintenance_work_mem = '${INDEX_BUILD_MEMORY}'`);
  for (const definition of definitions) await client.query(definition);
}

/** Grains at least this long are summed across an import's parts before they are written. */
const HELD_GRAIN_MS = 3_600_000;

/**
 * The cells of an import into an empty request log, written as its parts come, straight into the
 * rollups (the import holds `requests`, which every writer inserts into before it touches a
 * cell, so no other writer waits on a cell it holds). An hour or a day spans many parts, and
 * the database merging each part's cell into the stored one (its sketches above all) cost more
 * than the rest of the cells together: those cells are summed here instead, and each is written
 * once the next part no longer adds to it. A part adding to a cell already written merges in the
 * database, as any write: the answer never depends on the rows' order, only the cost.
 */
export class HeldCells {
  private held: Map<string, RollupRow>[] = ROLLUP_TABLES.map(() => new Map());

  /** Takes a part's cells; returns those to write now: the part's finer ones, and the held ones it did not add to. */
  add(rows: RollupRows): RollupRows {
    return ROLLUP_TABLES.map((table, index) => {
      const part = rows[index]!;
      if (table.ms < HELD_GRAIN_MS) return part;
      const before = this.held[index]!;
      const next = new Map<string, RollupRow>();
      for (const row of part) {
        const key = JSON.stringify(row.slice(0, table.keyColumns));
        const stored = before.get(key);
        if (stored) before.delete(key);
        next.set(key, stored ? addRow(COMBINE[index]!, stored, row) : row);
      }
      this.held[index] = next;
      return [...before.values()];
    });
  }

  /** Every cell held, forgotten here. */
  take(): RollupRows {
    const rows = this.held.map((cells) => [...cells.values()]);
    this.held = ROLLUP_TABLES.map(() => new Map());
    return rows;
  }
}

/**
 * A part's cells with their text as PostgreSQL stores it (`storableText`), those it makes one
 * added up: "m\u0000" and "m\uFFFD" are one cell there, and an upsert may not name a cell twice.
 * The reader sums cells by the text it read; nearly every part holds no U+0000 and is returned as it is.
 */
export function storableCells(rows: RollupRows): RollupRows {
  return ROLLUP_TABLES.map((table, index) => {
    const part = rows[index]!;
    if (!part.some((row) => keyStoredOtherwise(row, table.keyColumns))) return part;
    const cells = new Map<string, RollupRow>();
    for (const given of part) {
      const row = given.map((value, c) =>
        c < table.keyColumns && typeof value === 'string' ? storableText(value) : value,
      );
      const key = JSON.stringify(row.slice(0, table.keyColumns));
      const stored = cells.get(key);
      cells.set(key, stored ? addRow(COMBINE[index]!, stored, row) : row);
    }
    return [...cells.values()];
  });
}

/** Whether a cell's key holds a text PostgreSQL stores otherwise (U+0000, as U+FFFD). */
export function keyStoredOtherwise(row: RollupRow, keyColumns: number): boolean {
  return row.slice(0, keyColumns).some((value) => typeof value === 'string' && value.includes('\u0000'));
}

type Combine = 'key' | 'sum' | 'sketch' | 'latest';

/** How each column of each table's rows adds up, in `ROLLUP_TABLES` order. */
const COMBINE: Combine[][] = ROLLUP_TABLES.map((table) =>
  table.columns.map((column, c) => {
    if (c < table.keyColumns) return 'key';
    if (table.sketches.includes(column)) return 'sketch';
    return table.latest.includes(column) ? 'latest' : 'sum';
  }),
);

/** Two rows of one cell as one, as the stores' upserts add them: measures summed, sketches merged, the later time kept. */
function addRow(combine: readonly Combine[], a: RollupRow, b: RollupRow): RollupRow {
  const sum = a.slice();
  combine.forEach((how, c) => {
    const [x, y] = [a[c] ?? null, b[c] ?? null];
    if (how === 'sum') sum[c] = (x as number) + (y as number);
    else if (how === 'sketch') sum[c] = mergeEncoded(x as Uint8Array | null, y as Uint8Array | null);
    else if (how === 'latest') sum[c] = x === null || y === null ? (x ?? y) : Math.max(x as number, y as number);
  });
  return sum;
}
