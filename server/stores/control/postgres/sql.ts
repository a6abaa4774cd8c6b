import type pg from 'pg';

/** Where a repository's statements go: the pool (each statement on its own) or a transaction's client. */
export interface Sql {
  readonly client: pg.Pool | pg.PoolClient;
  /** True for a transaction's client: what must run inside one (the trail's chain) checks it. */
  readonly inTransaction: boolean;
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
