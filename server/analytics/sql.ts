import type { FilterColumn } from '../stores/telemetry/request-rows.js';

/**
 * How the analytics talk to a request-log store, SQLite's or PostgreSQL's. Their SQL is written
 * once, in what both run (named `@parameters`, quoted camel-case names, sub-selects with
 * aliases, no booleans summed, no division by a zero, lists in an order both give: SQLite
 * groups come sorted, PostgreSQL's do not, and it sorts nulls last); `Dialect` holds the few
 * phrases that differ. Statements are awaited on both: SQLite's answer at once, PostgreSQL's over the wire.
 */

export type Params = Record<string, unknown>;

export interface Dialect {
  name: 'sqlite' | 'postgres';
  /** The values of a parameter holding a JSON array of strings, as a sub-select (for `IN`). */
  valuesOf(param: string): string;
  /** A parameter holding a JSON array of number arrays, as rows named `alias` (for `FROM`). */
  tuplesOf(param: string, alias: string): string;
  /** Item `index` of such a row, as a number. */
  item(alias: string, index: number): string;
  /**
   * `FROM` and `WHERE` for the `requests` rows meeting `condition` beside each row of `tuples`
   * (`tuplesOf`, which `condition` may name), each tuple's rows looked up through an index.
   */
  rowsOfEach(tuples: string, condition: string): string;
  /** `text` casefolded as JavaScript folds it (the search's terms are). */
  folded(text: string): string;
  /** Whether `text` holds `part`. */
  contains(text: string, part: string): string;
  /**
   * True for every request row whose metadata JSON holds `@search` (casefolded, of `SAFE_TEXT` in
   * queries.ts) or a `\u` escape, and for a few more: the cheap check before `entriesOf` takes
   * the JSON apart.
   */
  metadataMayHold(): string;
  /** The key and value pairs of a column holding a JSON object, as rows `alias` (key, value) for `FROM`. */
  entriesOf(column: string, alias: string): string;
  /** `column`, written so that no index is chosen for it. */
  unindexed(column: string): string;
  /**
   * A request row's `column` equal to parameter `param`, as an index can find it (SQLite keeps
   * these columns as codes: server/stores/telemetry/request-rows.ts); `unindexed` as above.
   */
  rowIs(column: FilterColumn, param: string, options?: { unindexed?: boolean }): string;
  /** A request row of the window @from to @to costing at least parameter `param`, as an index finds it. */
  costAtLeast(param: string): string;
  /** The request row whose id is parameter `param`, as an index finds it. */
  requestIs(param: string): string;
  /** A request row's `column` one of the strings of parameter `param` (a JSON array), as `rowIs`. */
  rowIn(column: FilterColumn, param: string): string;
  /**
   * What request rows are grouped by to group them by `column`: on SQLite its code, one to a
   * string, which groups them without making each row's string first (a model's rows in half the time).
   */
  groupKey(column: FilterColumn): string;
  /**
   * Rows (bucket, group, value) of a series' parts as a JSON array of {bucket, group, value},
   * ordered by bucket and group (no group first), the bucket as UTC time without offset: one row
   * of (points, json), json as text or, on SQLite, its bytes (SeriesJson).
   */
  seriesJson(series: SeriesParts): string;
}

/** A timeseries' rows (bucket, group, value) in two parts, their buckets apart. */
export interface SeriesParts {
  /** Points summed from edges and cells of other grains: a few buckets, at either end. */
  edges: string;
  /**
   * Most points, each one row of a cell as wide as the interval, in buckets from parameter
   * `from` on to a bucket before the edges' later ones; read in its table's key order.
   */
  points: { sql: string; from: string } | null;
}

export interface AnalyticsSql {
  readonly dialect: Dialect;
  all<R>(sql: string, params?: Params): Promise<R[]>;
  get<R>(sql: string, params?: Params): Promise<R | undefined>;
  /** Runs `work` in one read transaction, so that its statements see the same rows. */
  snapshot<T>(work: () => Promise<T>): Promise<T>;
}
