import type pg from 'pg';
import { storableText } from '../stores/telemetry/postgres/request-sql.js';
import type { AnalyticsSql, Dialect, Params } from './sql.js';

export const POSTGRES: Dialect = {
  name: 'postgres',
  valuesOf: (param) => `SELECT jsonb_array_elements_text(CAST(@${param} AS jsonb))`,
  // Each tuple's numbers read once, into typed columns (OFFSET 0 keeps the planner from pulling
  // the casts up into every comparison of a join).
  tuplesOf: (param, alias) => `(SELECT CAST(t.value ->> 0 AS bigint) AS i0, CAST(t.value ->> 1 AS bigint) AS i1,
      CAST(t.value ->> 2 AS bigint) AS i2 FROM jsonb_array_elements(CAST(@${param} AS jsonb)) AS t (value) OFFSET 0) AS ${alias}`,
  item: (alias, index) => `${alias}.i${index}`,
  // Joined plainly, the planner pairs every row of the organisation with the list (it cannot tell
  // how short the list's ranges are): ten million rows read for a dashboard's two partial minutes.
  // A lateral sub-query kept apart (OFFSET 0) reads each range through the (org_id, ts) index.
  rowsOfEach: (tuples, condition) =>
    `FROM ${tuples} CROSS JOIN LATERAL (SELECT * FROM requests WHERE ${condition} OFFSET 0) AS requests`,
  // ICU's root locale folds as JavaScript's toLowerCase does (a final sigma, a dotted I); the
  // columns' own "C" collation would fold ASCII only.
  folded: (text) => `lower(${text} COLLATE "und-x-icu")`,
  contains: (text, part) => `strpos(${text}, ${part}) > 0`,
  metadataMayHold: () =>
    `(${POSTGRES.contains('requests.metadata', "'\\u'")} OR ${POSTGRES.contains(POSTGRES.folded('requests.metadata'), '@search')})`,
  // jsonb refuses the escape of U+0000, which JSON allows: read as U+FFFD, as the writer stores it.
  entriesOf: (column, alias) =>
    `jsonb_each_text(CAST(replace(${column}, '\\u0000', '\\ufffd') AS jsonb)) AS ${alias} (key, value)`,
  unindexed: (column) => column,
  rowIs: (column, param) => `${column} = @${param}`,
  costAtLeast: (param) => `cost_micro >= @${param}`,
  // Unique across the day tables by request_ids (migrations-postgres/007), whose time names the
  // one day table to look in.
  requestIs: (param) => `req_id = @${param} AND ts = (SELECT ts FROM request_ids WHERE req_id = @${param})`,
  rowIn: (column, param) => `${column} IN (${POSTGRES.valuesOf(param)})`,
  groupKey: (column) => column,
  seriesJson: ({ edges, points }) => `SELECT COUNT(*) AS points, COALESCE(json_agg(json_build_object(
      'bucket', to_char(to_timestamp(bucket / 1000.0) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS'),
      'group', "group", 'value', value)
    ORDER BY bucket, "group" NULLS FIRST), '[]')::text AS json
  FROM (${[edges, points?.sql].filter(Boolean).join('\nUNION ALL\n')}) AS series`,
};

const PARAMETER = /@([A-Za-z_][A-Za-z0-9_]*)/g;

/**
 * A value's type, written into the statement: PostgreSQL would otherwise guess it from where
 * the parameter stands, and guess `@to - 60000` to be a 32-bit integer.
 */
function typeOf(value: unknown): string {
  if (Array.isArray(value)) return value.every((item) => typeof item === 'number') ? 'int8[]' : 'text[]';
  // Integers past 2^53 (a minimum cost of 1e20 PKR) are compared as the doubles they are.
  if (typeof value === 'number') return Number.isSafeInteger(value) ? 'int8' : 'float8';
  if (typeof value === 'boolean') return 'bool';
  if (Buffer.isBuffer(value)) return 'bytea';
  return 'text';
}

/** `sql` with its `@name` parameters as `$n::type`, and their values in order. */
export function positional(sql: string, params: Params = {}): { text: string; values: unknown[] } {
  const numbers = new Map<string, number>();
  const values: unknown[] = [];
  const text = sql.replace(PARAMETER, (_, name: string) => {
    let number = numbers.get(name);
    if (number === undefined) {
      if (!Object.hasOwn(params, name)) throw new Error(`the query has no value for @${name}`);
      const value = params[name] ?? null;
      // As the writer stores text (U+0000 as U+FFFD): a filter or search holding one finds it.
      values.push(typeof value === 'string' ? storableText(value) : value);
      number = values.length;
      numbers.set(name, number);
    }
    return `$${number}::${typeOf(params[name])}`;
  });
  return { text, values };
}

/**
 * The analytics' statements on one PostgreSQL connection, held for one query: a snapshot is a
 * read-only transaction at REPEATABLE READ, so every statement in it sees the same rows.
 */
export class PgSql implements AnalyticsSql {
  readonly dialect = POSTGRES;

  constructor(private readonly client: pg.ClientBase) {}

  async all<R>(sql: string, params?: Params): Promise<R[]> {
    const { text, values } = positional(sql, params);
    return (await this.client.query({ text, values })).rows as R[];
  }

  async get<R>(sql: string, params?: Params): Promise<R | undefined> {
    return (await this.all<R>(sql, params))[0];
  }

  async snapshot<T>(work: () => Promise<T>): Promise<T> {
    await this.client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
    try {
      const result = await work();
      await this.client.query('COMMIT');
      return result;
    } catch (error) {
      await this.client.query('ROLLBACK').catch(() => undefined);
      throw error;
    }
  }
}
