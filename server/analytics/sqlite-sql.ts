import type { Database, Statement } from 'better-sqlite3';
import { metadataMayHoldSql } from '../stores/telemetry/request-metadata.js';
import { CODED_COLUMNS, codeOf, costAtLeast, storedRequestIdOf } from '../stores/telemetry/request-rows.js';
import { registerTelemetryFunctions } from '../stores/telemetry/sql-functions.js';
import type { AnalyticsSql, Dialect, Params, SeriesParts } from './sql.js';

export const SQLITE: Dialect = {
  name: 'sqlite',
  valuesOf: (param) => `SELECT value FROM json_each(@${param})`,
  tuplesOf: (param, alias) => `json_each(@${param}) AS ${alias}`,
  rowsOfEach: (tuples, condition) => `FROM ${tuples} CROSS JOIN requests WHERE ${condition}`,
  item: (alias, index) => `${alias}.value ->> ${index}`,
  // SQLite's lower() folds ASCII only, which is all an ASCII string needs, at a third of the cost
  // of calling into JavaScript (casefold, search-terms.ts).
  folded: (text) => `CASE WHEN length(${text}) = octet_length(${text}) THEN lower(${text}) ELSE casefold(${text}) END`,
  contains: (text, part) => `instr(${text}, ${part}) > 0`,
  metadataMayHold: () => metadataMayHoldSql('@search', (text) => SQLITE.folded(text)),
  entriesOf: (column, alias) => `json_each(${column}) AS ${alias}`,
  // `+` keeps SQLite's planner from choosing an index on the column.
  unindexed: (column) => `+${column}`,
  rowIs: (column, param, { unindexed = false } = {}) =>
    `${unindexed ? '+' : ''}${CODED_COLUMNS[column]} = ${codeOf(`@${param}`)}`,
  costAtLeast,
  // The stored id, as its unique index holds it (the view's req_id is made from it).
  requestIs: (param) => `req_key = ${storedRequestIdOf(`@${param}`)}`,
  rowIn: (column, param) =>
    `${CODED_COLUMNS[column]} IN (SELECT code FROM request_strings WHERE text IN (SELECT value FROM json_each(@${param})))`,
  groupKey: (column) => CODED_COLUMNS[column],
  seriesJson,
};

// JSON from SQLite itself: handing thousands of rows to JavaScript cost more than making it.
// Its numbers read back as the same doubles (5.0 for 5); datetime() is a third of strftime()'s cost.
const POINT = `json_object('bucket', replace(datetime(bucket / 1000, 'unixepoch'), ' ', 'T'), 'group', "group", 'value', value)`;

/** `source`'s points ordered, as (n, list): the list a JSON array's inside, null for none. */
const orderedList = (source: string, where = '') => `(SELECT COUNT(*) AS n, group_concat(${POINT}, ',') AS list
  FROM (SELECT bucket, "group", value FROM ${source} ${where} ORDER BY bucket, "group"))`;

/**
 * A series' JSON, as its bytes (SeriesJson). Sorting every point took a third of a 30-day chart's
 * time, so only the edges are sorted: the points, read in their cells' key order, need no sort
 * (SQLite keeps a sub-query's order for the aggregate over it, and skips the ORDER BY that the
 * key already gives), and the edges' buckets lie before and after theirs.
 */
function seriesJson({ edges, points }: SeriesParts): string {
  if (!points) {
    return `SELECT COUNT(*) AS points, CAST(COALESCE(json_group_array(${POINT} ORDER BY bucket, "group"), '[]') AS BLOB) AS json
  FROM (${edges}) AS series`;
  }
  return `WITH edges AS MATERIALIZED (${edges})
  SELECT early.n + middle.n + late.n AS points,
    CAST('[' || concat_ws(',', early.list, middle.list, late.list) || ']' AS BLOB) AS json
  FROM ${orderedList('edges', `WHERE bucket < @${points.from}`)} AS early,
    ${orderedList(`(${points.sql})`)} AS middle,
    ${orderedList('edges', `WHERE bucket >= @${points.from}`)} AS late`;
}

/** The analytics' statements on one SQLite connection, each distinct one prepared once. */
export class SqliteSql implements AnalyticsSql {
  readonly dialect = SQLITE;
  private readonly statements = new Map<string, Statement>();

  constructor(readonly db: Database) {
    registerTelemetryFunctions(db);
  }

  async all<R>(sql: string, params?: Params): Promise<R[]> {
    const statement = this.statement(sql);
    return (params === undefined ? statement.all() : statement.all(params)) as R[];
  }

  async get<R>(sql: string, params?: Params): Promise<R | undefined> {
    const statement = this.statement(sql);
    return (params === undefined ? statement.get() : statement.get(params)) as R | undefined;
  }

  /**
   * A transaction around awaited work: safe on this connection because its statements answer at
   * once, so the work runs to its end before anything else is taken up (one job at a time).
   */
  async snapshot<T>(work: () => Promise<T>): Promise<T> {
    if (this.db.inTransaction) return work();
    this.db.exec('BEGIN');
    try {
      const result = await work();
      this.db.exec('COMMIT');
      return result;
    } catch (error) {
      if (this.db.inTransaction) this.db.exec('ROLLBACK');
      throw error;
    }
  }

  /** A prepared statement, for what only SQLite runs (the search index). */
  statement(sql: string): Statement {
    let statement = this.statements.get(sql);
    if (!statement) {
      statement = this.db.prepare(sql);
      this.statements.set(sql, statement);
    }
    return statement;
  }
}
