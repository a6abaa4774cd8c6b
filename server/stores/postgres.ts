import { readFileSync } from 'node:fs';
import pg from 'pg';
import { migrationFiles } from './migrate.js';

const INT8_OID = 20;
const NUMERIC_OID = 1700;

/**
 * BIGINT columns (times in ms, money in micro-PKR) and NUMERIC sums of them (SUM of a BIGINT is
 * NUMERIC) as JS numbers rather than pg's default strings: every value the stores keep, and
 * every sum the analytics make, is far below 2^53. Per pool, not pg's global parsers.
 */
export const BIGINT_AS_NUMBER: pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    (oid === INT8_OID || oid === NUMERIC_OID) && format !== 'binary'
      ? (text: string) => Number(text)
      : pg.types.getTypeParser(oid, format)) as pg.CustomTypesConfig['getTypeParser'],
};

export interface PostgresOptions {
  /** Connections the pool keeps at most. */
  max?: number;
  /** Shown in pg_stat_activity, so an operator sees which replica holds what. */
  applicationName?: string;
  /** A statement running longer is cancelled by the database. */
  statementTimeoutMs?: number;
  /** A connection not made within this long fails (an unreachable host would take the OS's minutes); 10 s by default. */
  connectTimeoutMs?: number;
}

/** A pool on `url` (postgres://…), with the settings every store shares. */
export function openPool(url: string, options: PostgresOptions = {}): pg.Pool {
  const pool = new pg.Pool({
    connectionString: url,
    max: options.max ?? 10,
    application_name: options.applicationName ?? 'gateway-console',
    statement_timeout: options.statementTimeoutMs,
    connectionTimeoutMillis: options.connectTimeoutMs ?? 10_000,
    // The stores' statements are short: compiling one with LLVM (PostgreSQL's JIT, chosen by the
    // planner's cost) took longer than running it, 100 ms and more for a dashboard of a few ms.
    options: '-c jit=off',
    types: BIGINT_AS_NUMBER,
  });
  // An idle client's error (the server restarted) is the pool's to replace; without a listener
  // it would crash the process.
  pool.on('error', () => undefined);
  return pool;
}

/**
 * Work of a migration that its SQL cannot do (data built by the code), run after the file's SQL in
 * its transaction, by the file's version. `upgrading`: the store had a schema before this run.
 */
export type PostgresMigrationSteps = Readonly<
  Record<number, (client: pg.PoolClient, upgrading: boolean) => Promise<void>>
>;

/**
 * Applies the numbered `NNN_name.sql` files of `folder` that `store` has not had yet, each in its
 * own transaction (with its step, if it has one, and `before`'s first, which may say what the
 * migration is about to do), under a lock every replica takes: replicas starting together apply
 * each once.
 */
export async function migratePostgres(
  pool: pg.Pool,
  store: string,
  folder: URL,
  steps: PostgresMigrationSteps = {},
  before: PostgresMigrationSteps = {},
): Promise<void> {
  const client = await pool.connect();
  const lock = [`migrate ${store}`];
  try {
    await client.query('SELECT pg_advisory_lock(hashtext($1))', lock);
    await client.query('CREATE TABLE IF NOT EXISTS schema_versions (store TEXT PRIMARY KEY, version INTEGER NOT NULL)');
    const found = await client.query<{ version: number }>('SELECT version FROM schema_versions WHERE store = $1', [
      store,
    ]);
    const current = found.rows[0]?.version ?? 0;
    for (const { name, version } of migrationFiles(folder)) {
      if (version <= current) continue;
      await client.query('BEGIN');
      try {
        await before[version]?.(client, current > 0);
        await client.query(readFileSync(new URL(name, folder), 'utf8'));
        await steps[version]?.(client, current > 0);
        await client.query(
          `INSERT INTO schema_versions (store, version) VALUES ($1, $2)
           ON CONFLICT (store) DO UPDATE SET version = excluded.version`,
          [store, version],
        );
        await client.query('COMMIT');
      } catch (error) {
        // The migration's error is the one told, whatever the rollback does.
        await client.query('ROLLBACK').catch(() => undefined);
        throw error;
      }
    }
  } finally {
    // Should the unlock fail, the connection is ended rather than pooled: the lock goes with it.
    const unlocked = await client.query('SELECT pg_advisory_unlock(hashtext($1))', lock).then(
      () => undefined,
      (error: Error) => error,
    );
    client.release(unlocked);
  }
}
