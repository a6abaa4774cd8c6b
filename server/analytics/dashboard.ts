import { BOARD_MEASURES } from '../stores/telemetry/board-cells.js';
import { keptAccumulators } from '../stores/telemetry/latency-sketch.js';
import { BOARD_GRAINS, CACHE_GRAINS, type Grain } from '../stores/telemetry/rollup-grains.js';
import { CACHE_MEASURES } from '../stores/telemetry/rollup-sums.js';
import type { CacheSums, CellGroupBy, DashboardPoint, GroupBy, Scope } from './query-types.js';
import type { AnalyticsSql, Dialect } from './sql.js';
import { cellGrains, keptSegments } from './windows.js';

/**
 * The dashboard's read (GET /analytics/dashboard): a window cut into buckets at given edges
 * (the reporting zone's, server/domain/reporting-zone.ts), each bucket's outcomes, cost,
 * tokens and speed summed exactly and its latency sketches merged, from the dashboard's cells
 * (migrations/008_dashboard_rollups.sql) plus the rows at the edges.
 *
 * Each bucket is read as a window of its own: whole cells of the coarsest grain that fits in
 * it, finer ones toward its edges (windows.ts), so a Kathmandu day (18:15 to 18:15 UTC) is 23
 * hour cells and a few five-minute ones, not 288. The segments of every bucket go to SQL as one
 * JSON list per grain, joined to the cells through their key, and each cell comes back with its
 * bucket's number; the sketches are merged here in one dense accumulator, bucket after bucket.
 */

const PERCENTILES = [0.5, 0.95, 0.99];

const DIM_CODE: Record<CellGroupBy | 'org', number> = { org: 0, project: 1, key: 2, model: 3 };

/** The one dimension the scope names (the cells are by one at a time); null when it names two. */
function dimensionOf(scope: Scope): { dim: number; value: string } | null {
  const named = [
    scope.projectId !== undefined && { dim: DIM_CODE.project, value: scope.projectId },
    scope.keyId !== undefined && { dim: DIM_CODE.key, value: scope.keyId },
    scope.model !== undefined && { dim: DIM_CODE.model, value: scope.model },
  ].filter((d): d is { dim: number; value: string } => d !== false);
  if (named.length > 1) return null;
  return named[0] ?? { dim: DIM_CODE.org, value: '' };
}

/** How many rows `condition` holds for. */
const rowsWhere = (condition: string) => `SUM(CASE WHEN ${condition} THEN 1 ELSE 0 END)`;
/** The sum of a column's known values, 0 when none is known. */
const total = (column: string) => `COALESCE(SUM(${column}), 0)`;

const RAW_SUMS = [
  'COUNT(*)',
  rowsWhere('status < 400'),
  rowsWhere('status >= 400 AND status < 500 AND upstream_error IS NOT NULL'),
  rowsWhere('status >= 500'),
  // Refused before dispatch: a 4xx the upstream never explained (board-cells.ts).
  rowsWhere('status >= 400 AND status < 500 AND upstream_error IS NULL'),
  'SUM(cost_micro)',
  total('prompt_tokens'),
  'COUNT(prompt_tokens)',
  'SUM(tokens_generated)',
  total('cache_read_input_tokens'),
  total('cache_creation_input_tokens'),
  rowsWhere('cache_read_input_tokens IS NOT NULL OR cache_creation_input_tokens IS NOT NULL'),
  'SUM(CASE WHEN tokens_generated > 0 AND total_ms - COALESCE(ttft_ms, pre_dispatch_ms) > 0 THEN tokens_generated ELSE 0 END)',
  total(
    'CASE WHEN tokens_generated > 0 AND total_ms - COALESCE(ttft_ms, pre_dispatch_ms) > 0 THEN total_ms - COALESCE(ttft_ms, pre_dispatch_ms) END',
  ),
  // Upstream 429s (migration 010).
  rowsWhere('status = 429 AND upstream_error IS NOT NULL'),
];
const MEASURE_COLUMNS = BOARD_MEASURES.map((m, i) => `m${i}`);
const RAW_MEASURES = RAW_SUMS.map((sum, i) => `${sum} AS m${i}`).join(', ');
const CELL_MEASURES = BOARD_MEASURES.map((m, i) => `c.${m} AS m${i}`).join(', ');

/** The scope's filters on the rows; a key's rows are read through its own index. */
function rowFilters(dialect: Dialect, scope: Scope): string {
  // Not SQLite reading every key's rows through the organisation's index (org_id, ts).
  const clauses = [dialect.rowIs('org_id', 'orgId', { unindexed: scope.keyId !== undefined })];
  if (scope.projectId !== undefined) clauses.push(dialect.rowIs('project_id', 'projectId'));
  if (scope.keyId !== undefined) clauses.push(dialect.rowIs('key_id', 'keyId'));
  if (scope.model !== undefined) clauses.push(dialect.rowIs('model', 'model'));
  if (scope.servedBy !== undefined) clauses.push('served_by = @servedBy');
  if (scope.api !== undefined) clauses.push('api = @api');
  return clauses.join(' AND ');
}

function scopeParams(scope: Scope): Record<string, unknown> {
  const params: Record<string, unknown> = { orgId: scope.orgId };
  for (const name of ['projectId', 'keyId', 'model', 'servedBy', 'api'] as const)
    if (scope[name] !== undefined) params[name] = scope[name];
  return params;
}

/** Each bucket's segments, by grain (null: rows), as [from, to, bucket] lists (`Dialect.tuplesOf`). */
function bucketSegments(
  scope: Scope,
  edges: readonly number[],
  grains: readonly Grain[],
): Map<Grain | null, number[][]> {
  const byGrain = new Map<Grain | null, number[][]>([[null, []], ...grains.map((g) => [g, []] as [Grain, number[][]])]);
  for (let bucket = 0; bucket + 1 < edges.length; bucket++) {
    const from = Math.max(edges[bucket]!, scope.from);
    const to = Math.min(edges[bucket + 1]!, scope.to + 1);
    for (const part of keptSegments(from, to, grains, scope.horizon))
      byGrain.get(part.grain)!.push([part.from, part.to, bucket]);
  }
  return byGrain;
}

/**
 * SQL giving `columns` and the bucket `b` of each stored cell of the listed segments (`@cells<i>`,
 * one per grain, of [from, to, bucket]) and of the rows of the segments left to them (`@rows`),
 * the rows summed by `rowGroup`: the segments' list is joined to the cells and rows through
 * their keys, one index range each.
 */
function segmentsSql(
  dialect: Dialect,
  scope: Scope,
  grains: readonly Grain[],
  parts: { cells: string; rows: string; rowGroup: string; value: boolean },
): string {
  const item = (index: number) => dialect.item('r', index);
  const cells = grains.map(
    (grain, index) => `SELECT ${parts.cells}, ${item(2)} AS b
      FROM ${dialect.tuplesOf(`cells${index}`, 'r')} CROSS JOIN ${grain.board} AS c
      WHERE c.org_id = @orgId AND c.dim = @dim ${parts.value ? 'AND c.value = @value' : ''}
        AND ${dialect.unindexed('c.bucket')} >= @cellsFrom${index} AND ${dialect.unindexed('c.bucket')} < @cellsTo${index}
        AND c.bucket >= ${item(0)} AND c.bucket < ${item(1)}`,
  );
  const rows = `SELECT ${parts.rows}, ${item(2)} AS b
    ${dialect.rowsOfEach(dialect.tuplesOf('rows', 'r'), `${rowFilters(dialect, scope)} AND ts >= ${item(0)} AND ts < ${item(1)}`)}
    GROUP BY ${parts.rowGroup}`;
  return [...cells, rows].join('\nUNION ALL\n');
}

/**
 * The segments' lists as `segmentsSql` binds them, and the span each grain's list covers: on
 * PostgreSQL, whose planner may read a grain's cells once and pair them with the list rather than
 * look each segment up, the span keeps that read to the window. SQLite, which looks each segment
 * up, is kept from using the span instead (`unindexed`): read for every segment, it cost a month's
 * dashboard of one key five times its time.
 */
function segmentParams(
  byGrain: Map<Grain | null, number[][]>,
  grains: readonly Grain[],
): Record<string, string | number> {
  const params: Record<string, string | number> = { rows: JSON.stringify(byGrain.get(null)) };
  grains.forEach((grain, index) => {
    const list = byGrain.get(grain)!;
    params[`cells${index}`] = JSON.stringify(list);
    // A loop, not Math.min(...list): a list may hold more segments than a call takes arguments.
    let from = Infinity;
    let to = -Infinity;
    for (const [start, end] of list) {
      from = Math.min(from, start!);
      to = Math.max(to, end!);
    }
    params[`cellsFrom${index}`] = list.length === 0 ? 0 : from;
    params[`cellsTo${index}`] = list.length === 0 ? 0 : to;
  });
  return params;
}

interface CellRow {
  b: number;
  latency: Uint8Array | null;
  ttft: Uint8Array | null;
  [measure: string]: number | Uint8Array | null;
}

/**
 * Each bucket's figures, and the whole window's merged from the same cells and rows: `edges`
 * cover the window (the first at or before its start, the last after its end, as bucketEdges
 * gives them), so that each of its requests is in one bucket.
 */
export async function dashboardBuckets(
  sql: AnalyticsSql,
  scope: Scope,
  edges: readonly number[],
): Promise<{ points: DashboardPoint[]; whole: DashboardPoint }> {
  if (edges.length < 2 || edges[0]! > scope.from || edges.at(-1)! <= scope.to) {
    throw new RangeError(`bucket edges that do not cover the window [${scope.from}, ${scope.to}]`);
  }
  const dimension = dimensionOf(scope);
  // Two dimensions at once (a project's model) have no cells: the rows answer.
  const grains = dimension === null ? [] : cellGrains(scope, BOARD_GRAINS);
  const params = {
    ...scopeParams(scope),
    ...dimension,
    ...segmentParams(bucketSegments(scope, edges, grains), grains),
  };
  const text = segmentsSql(sql.dialect, scope, grains, {
    cells: `${CELL_MEASURES}, c.latency, c.ttft`,
    rows: `${RAW_MEASURES}, sketch_of(total_ms) AS latency, sketch_of(ttft_ms) AS ttft`,
    rowGroup: 'b',
    value: true,
  });
  const rows = await sql.all<CellRow>(text, params);
  rows.sort((a, b) => a.b - b.b);

  const [latency, ttft, wholeLatency, wholeTtft] = keptAccumulators();
  const points: DashboardPoint[] = [];
  const total = BOARD_MEASURES.map(() => 0);
  let next = 0;
  for (let bucket = 0; bucket + 1 < edges.length; bucket++) {
    const measures = BOARD_MEASURES.map(() => 0);
    for (; next < rows.length && rows[next]!.b === bucket; next++) {
      const row = rows[next]!;
      MEASURE_COLUMNS.forEach((column, i) => (measures[i]! += row[column] as number));
      if (row.latency) latency.addEncoded(row.latency);
      if (row.ttft) ttft.addEncoded(row.ttft);
    }
    measures.forEach((value, i) => (total[i]! += value));
    wholeLatency.addAll(latency);
    wholeTtft.addAll(ttft);
    points.push({ measures, latency: latency.quantiles(PERCENTILES), ttft: ttft.quantiles(PERCENTILES) });
    latency.reset();
    ttft.reset();
  }
  const whole = {
    measures: total,
    latency: wholeLatency.quantiles(PERCENTILES),
    ttft: wholeTtft.quantiles(PERCENTILES),
  };
  wholeLatency.reset();
  wholeTtft.reset();
  return { points, whole };
}

const CACHE_RAW = [
  `${total('prompt_tokens')} AS prompt_tokens`,
  'COUNT(prompt_tokens) AS prompt_rows',
  `${total('cache_read_input_tokens')} AS cache_read`,
  `${total('cache_creation_input_tokens')} AS cache_write`,
  `${rowsWhere('cache_read_input_tokens IS NOT NULL OR cache_creation_input_tokens IS NOT NULL')} AS cache_rows`,
  `${total('CASE WHEN prompt_tokens IS NOT NULL THEN cache_read_input_tokens END')} AS known_read`,
  `${total('CASE WHEN prompt_tokens IS NOT NULL THEN cache_creation_input_tokens END')} AS known_write`,
].join(', ');

/** Prompt and cache tokens by model over the window, from the cache's cells (009) and the rows at the edges. */
export async function cacheByModel(sql: AnalyticsSql, scope: Scope): Promise<CacheSums[]> {
  const params = scopeParams(scope);
  const cellFilters = ['org_id = @orgId'];
  if (scope.projectId !== undefined) cellFilters.push('project_id = @projectId');
  if (scope.keyId !== undefined) cellFilters.push('key_id = @keyId');
  if (scope.model !== undefined) cellFilters.push('model = @model');
  const parts = keptSegments(scope.from, scope.to + 1, cellGrains(scope, CACHE_GRAINS), scope.horizon).map(
    (part, index) => {
      params[`from${index}`] = part.from;
      params[`to${index}`] = part.to;
      if (!part.grain) {
        return `SELECT model, ${CACHE_RAW} FROM requests
        WHERE ${rowFilters(sql.dialect, scope)} AND ts >= @from${index} AND ts < @to${index}
        GROUP BY ${sql.dialect.groupKey('model')}`;
      }
      return `SELECT model, ${CACHE_MEASURES.map((m) => `SUM(${m}) AS ${m}`).join(', ')} FROM ${part.grain.cache}
      WHERE ${cellFilters.join(' AND ')} AND bucket >= @from${index} AND bucket < @to${index} GROUP BY model`;
    },
  );
  if (parts.length === 0) return [];
  return sql.all<CacheSums>(
    `SELECT model, ${CACHE_MEASURES.map((m) => `SUM(${m}) AS ${m}`).join(', ')}
    FROM (${parts.join('\nUNION ALL\n')}) AS parts GROUP BY model ORDER BY model`,
    params,
  );
}

const GROUP_COLUMN = { project: 'project_id', key: 'key_id', model: 'model', api: 'api' } as const satisfies Record<
  GroupBy,
  string
>;

/**
 * Each group's requests per bucket and its latency percentiles over the window, for the top
 * table's trend lines and p95: from the cells by the group's dimension when the scope names no
 * other, else from the rows (always by API, which no cell carries).
 */
export async function groupTrends(
  sql: AnalyticsSql,
  scope: Scope,
  groupBy: GroupBy,
  edges: readonly number[],
): Promise<Map<string | null, { trend: number[]; latency: number[] | null }>> {
  const own = dimensionOf(scope);
  const dim = groupBy === 'api' ? null : DIM_CODE[groupBy];
  const byCells = dim !== null && own !== null && (own.dim === DIM_CODE.org || own.dim === dim);
  const grains = byCells ? cellGrains(scope, BOARD_GRAINS) : [];
  const params: Record<string, unknown> = { ...scopeParams(scope), ...(dim === null ? {} : { dim }) };
  const value = byCells && own.dim !== DIM_CODE.org;
  if (value) params.value = own.value;
  Object.assign(params, segmentParams(bucketSegments(scope, edges, grains), grains));
  // Cells keep a null key or project as ''; a model is never null, and '' is a model of its own.
  const cellGroup = groupBy === 'model' ? 'c.value' : "NULLIF(c.value, '')";
  const text = segmentsSql(sql.dialect, scope, grains, {
    cells: `${cellGroup} AS grp, c.requests AS requests, c.latency AS latency`,
    rows: `${GROUP_COLUMN[groupBy]} AS grp, COUNT(*) AS requests, sketch_of(total_ms) AS latency`,
    rowGroup: `${groupBy === 'api' ? 'grp' : sql.dialect.groupKey(GROUP_COLUMN[groupBy])}, b`,
    value,
  });
  const found = await sql.all<{
    grp: string | null;
    b: number;
    requests: number;
    latency: Uint8Array | null;
  }>(text, params);
  // By group, so that one accumulator serves each group in turn.
  const byGroup = new Map<string | null, typeof found>();
  for (const row of found) {
    const list = byGroup.get(row.grp);
    if (list) list.push(row);
    else byGroup.set(row.grp, [row]);
  }
  const result = new Map<string | null, { trend: number[]; latency: number[] | null }>();
  const [latency] = keptAccumulators();
  for (const [group, cells] of byGroup) {
    const trend = edges.slice(1).map(() => 0);
    for (const cell of cells) {
      trend[cell.b]! += cell.requests;
      if (cell.latency) latency.addEncoded(cell.latency);
    }
    result.set(group, { trend, latency: latency.quantiles(PERCENTILES) });
    latency.reset();
  }
  return result;
}
