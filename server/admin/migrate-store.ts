import { existsSync } from 'node:fs';
import type { Database } from 'better-sqlite3';
import type pg from 'pg';
import { openPool } from '../stores/postgres.js';
import { migrateControl, WRITE_LOCK } from '../stores/control/postgres/store.js';
import { SqliteControlStore } from '../stores/control/store.js';

/**
 * The control store's tables, in the order their references need. `serial`: SQLite's rowid,
 * which orders rows made in one millisecond, goes into PostgreSQL's `serial` column (or `id`).
 */
const TABLES: { name: string; serial?: 'serial' | 'id' }[] = [
  { name: 'organizations', serial: 'serial' },
  { name: 'join_domains' },
  { name: 'accounts', serial: 'serial' },
  { name: 'sessions' },
  { name: 'session_tokens' },
  { name: 'projects', serial: 'serial' },
  { name: 'route_documents' },
  { name: 'api_keys', serial: 'serial' },
  { name: 'vault_keys' },
  { name: 'deposits', serial: 'id' },
  { name: 'settled_spend' },
  { name: 'activity' },
  { name: 'activity_heads' },
];

/** Rows per INSERT: PostgreSQL takes at most 65,535 parameters a statement. */
const BATCH = 500;

export type MigrateOutcome = { ok: true; counts: { table: string; rows: number }[] } | { ok: false; error: string };

function columnsOf(db: Database, table: string): string[] {
  return (db.pragma(`table_info(${table})`) as { name: string }[]).map((column) => column.name);
}

async function copyTable(db: Database, client: pg.PoolClient, table: (typeof TABLES)[number]): Promise<number> {
  const columns = columnsOf(db, table.name).filter((name) => name !== table.serial);
  const read = table.serial ? [...columns, `rowid AS ${table.serial}`] : columns;
  const names = table.serial ? [...columns, table.serial] : columns;
  const rows = db
    .prepare(`SELECT ${read.join(', ')} FROM ${table.name}`)
    .raw()
    .iterate() as IterableIterator<unknown[]>;
  let copied = 0;
  let batch: unknown[][] = [];
  const flush = async () => {
    if (batch.length === 0) return;
    const values = batch.map((row, r) => `(${row.map((_, c) => `$${r * names.length + c + 1}`).join(', ')})`);
    await client.query(
      `INSERT INTO ${table.name} (${names.join(', ')}) OVERRIDING SYSTEM VALUE VALUES ${values.join(', ')}`,
      batch.flat(),
    );
    copied += batch.length;
    batch = [];
  };
  for (const row of rows) {
    batch.push(row);
    if (batch.length === BATCH) await flush();
  }
  await flush();
  if (table.serial) {
    // New rows go on from the copied ones.
    await client.query(
      `SELECT setval(pg_get_serial_sequence('${table.name}', '${table.serial}'), COALESCE(MAX(${table.serial}), 0) + 1, false)
       FROM ${table.name}`,
    );
  }
  return copied;
}

/**
 * Copies a data folder's `control.db` into an empty PostgreSQL control store, in one transaction
 * that commits only when every table holds as many rows as the file's: a copy is whole or absent.
 * The file is brought up to date first, as a server opening it would.
 */
export async function migrateStore(sqlitePath: string, url: string): Promise<MigrateOutcome> {
  if (!existsSync(sqlitePath)) return { ok: false, error: `no control store at ${sqlitePath}` };
  // Sessions are copied, not made: the lifetimes only complete the store's options.
  const source = SqliteControlStore.open(sqlitePath, { accessSeconds: 1, refreshSeconds: 1 });
  const pool = openPool(url, { max: 1 });
  try {
    await migrateControl(pool);
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      await client.query(WRITE_LOCK);
      // Every table but the routes document a new store starts with: nothing is ever merged.
      for (const { name } of TABLES.filter((table) => table.name !== 'route_documents')) {
        const existing = await client.query<{ n: number }>(`SELECT COUNT(*)::int AS n FROM ${name}`);
        if (existing.rows[0]!.n > 0) {
          await client.query('ROLLBACK');
          return {
            ok: false,
            error: `the database already holds a control store (${name} has rows): migrate-store copies into an empty one`,
          };
        }
      }
      // The file's routes document, every version of it, replaces the one a new store starts with
      // (TRUNCATE: the table refuses DELETE, a stored version being never removed).
      await client.query('TRUNCATE route_documents');
      // One snapshot of the file for every table.
      source.db.exec('BEGIN');
      const counts: { table: string; rows: number }[] = [];
      try {
        for (const table of TABLES) {
          const copied = await copyTable(source.db, client, table);
          const stored = await client.query<{ n: number }>(`SELECT COUNT(*)::int AS n FROM ${table.name}`);
          if (stored.rows[0]!.n !== copied)
            throw new Error(`${table.name}: ${copied} rows read, ${stored.rows[0]!.n} stored`);
          counts.push({ table: table.name, rows: copied });
        }
      } finally {
        source.db.exec('COMMIT');
      }
      await client.query('COMMIT');
      return { ok: true, counts };
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    } finally {
      client.release();
    }
  } finally {
    await pool.end();
    await source.close();
  }
}
