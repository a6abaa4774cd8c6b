import type pg from 'pg';
import { PgReadCache, type ChangeCount } from './read-cache.js';

/** Where a repository's statements go: the pool (each statement on its own) or a transaction's client. */
export interface Sql {
  readonly client: pg.Pool | pg.PoolClient;
  /** True for a transaction's client: what must run inside one (the trail's chain) checks it. */
  readonly inTransaction: boolean;
  /** The pool's change count, which its hot reads are cached under (read-cache.ts); none in a transaction. */
  readonly changes?: ChangeCount;
}

/** A cache of `sql`'s reads outside transactions; a transaction reads through. */
export function cacheOf<V>(sql: Sql, limit?: number): PgReadCache<V> | null {
  return sql.changes ? new PgReadCache<V>(sql.changes, limit) : null;
}

/** `read`, answered from `cache` when there is one. */
export function cached<V>(cache: PgReadCache<V> | null, key: string, read: () => Promise<V>): Promise<V> {
  return cache ? cache.get(key, read) : read();
}

export async function rows<R extends pg.QueryResultRow>(sql: Sql, text: string, values: unknown[] = []): Promise<R[]> {
  return (await sql.client.query<R>(text, values)).rows;
}

export async function first<R extends pg.QueryResultRow>(
  sql: Sql,
  text: string,
  values: unknown[] = [],
): Promise<R | undefined> {
  return (await sql.client.query<R>(text, values)).rows[0];
}

/** How many rows the statement changed. */
export async function changes(sql: Sql, text: string, values: unknown[] = []): Promise<number> {
  return (await sql.client.query(text, values)).rowCount ?? 0;
}
