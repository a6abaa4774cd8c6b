import type { Statement } from 'better-sqlite3';
import { BOARD_MEASURES } from '../stores/telemetry/board-cells.js';
import { addEncoded, quantiles, type Bins } from '../stores/telemetry/latency-sketch.js';
import { BOARD_GRAINS, type Grain } from '../stores/telemetry/rollup-grains.js';
import type { CacheSums, DashboardPoint, GroupBy, Scope } from './query-types.js';
import { segments } from './windows.js';

/**
 * The dashboard's read (GET /analytics/dashboard): a window cut into buckets at given edges
 * (the reporting zone's, server/domain/reporting-zone.ts), each bucket's outcomes, cost,
 * tokens and speed summed exactly and its latency sketches merged, from the dashboard's cells
 * (migrations/008_dashboard_rollups.sql) plus the rows at the window's edges.
 *
 * The cells are read at the coarsest grain whose cells each lie in one bucket (every inner
 * edge a multiple of its width: a UTC day's buckets read day cells, Karachi's hour cells,
 * Kathmandu's five-minute ones), grouped by cell in SQL, and put in their buckets here: a few
 * hundred rows at most from a month.
 */

const PERCENTILES = [0.5, 0.95, 0.99];

/** Cell widths a window read only from rows is grouped by: the coarsest dividing every edge. */
const ROW_CELLS_MS = [86_400_000, 3_600_000, 300_000, 60_000, 1_000, 1];

const DIM_CODE: Record<GroupBy | 'org', number> = { org: 0, project: 1, key: 2, model: 3 };

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

const RAW_SUMS = [
  'COUNT(*)',
  'SUM(status < 400)',
  'SUM(status >= 400 AND status < 500 AND upstream_error IS NOT NULL)',
  'SUM(status >= 500)',
  // Refused before dispatch: a 4xx the upstream never explained (board-cells.ts).
  'SUM(status >= 400 AND status < 500 AND upstream_error IS NULL)',
  'SUM(cost_micro)',
  'TOTAL(prompt_tokens)',
  'COUNT(prompt_tokens)',
  'SUM(tokens_generated)',
  'TOTAL(cache_read_input_tokens)',
  'TOTAL(cache_creation_input_tokens)',
  'SUM(cache_read_input_tokens IS NOT NULL OR cache_creation_input_tokens IS NOT NULL)',
  'SUM(CASE WHEN tokens_generated > 0 AND total_ms - COALESCE(ttft_ms, pre_dispatch_ms) > 0 THEN tokens_generated ELSE 0 END)',
  'TOTAL(CASE WHEN tokens_generated > 0 AND total_ms - COALESCE(ttft_ms, pre_dispatch_ms) > 0 THEN total_ms - COALESCE(ttft_ms, pre_dispatch_ms) END)',
];
const MEASURE_COLUMNS = BOARD_MEASURES.map((m, i) => `m${i}`);
const RAW_MEASURES = RAW_SUMS.map((sum, i) => `${sum} AS m${i}`).join(', ');
const CELL_MEASURES = BOARD_MEASURES.map((m, i) => `SUM(${m}) AS m${i}`).join(', ');

function rawWhere(scope: Scope, index: number): string {
  const clauses = ['org_id = @orgId', `ts >= @from${index}`, `ts < @to${index}`];
  if (scope.projectId !== undefined) clauses.push('project_id = @projectId');
  if (scope.keyId !== undefined) clauses.push('key_id = @keyId');
  if (scope.model !== undefined) clauses.push('model = @model');
  return clauses.join(' AND ');
}

/** Rows of (cell, m0…m13, latency, ttft) over the window, one or more per cell of `@cell` ms. */
function windowSql(scope: Scope, grains: readonly Grain[]): { sql: string; params: Record<string, unknown> } {
  const dimension = grains.length > 0 ? dimensionOf(scope)! : null;
  const params: Record<string, unknown> = { orgId: scope.orgId, ...dimension };
  for (const name of ['projectId', 'keyId', 'model'] as const)
    if (scope[name] !== undefined) params[name] = scope[name];
  const parts = segments(scope.from, scope.to + 1, grains).map((part, index) => {
    params[`from${index}`] = part.from;
    params[`to${index}`] = part.to;
    if (!part.grain) {
      return `SELECT ts - ts % @cell AS cell, ${RAW_MEASURES}, sketch_of(total_ms) AS latency, sketch_of(ttft_ms) AS ttft
        FROM requests WHERE ${rawWhere(scope, index)} GROUP BY cell`;
    }
    return `SELECT bucket - bucket % @cell AS cell, ${CELL_MEASURES}, sketch_sum(latency) AS latency, sketch_sum(ttft) AS ttft
      FROM ${part.grain.board} WHERE org_id = @orgId AND dim = @dim AND value = @value
        AND bucket >= @from${index} AND bucket < @to${index} GROUP BY cell`;
  });
  return { sql: parts.join('\nUNION ALL\n'), params };
}

/** The grains whose cells each lie in one bucket: every inner edge on a cell's boundary. */
function alignedGrains(edges: readonly number[]): Grain[] {
  const inner = edges.slice(1, -1);
  const coarsest = BOARD_GRAINS.findIndex((grain) => inner.every((edge) => edge % grain.ms === 0));
  return coarsest < 0 ? [] : BOARD_GRAINS.slice(coarsest);
}

interface CellRow {
  cell: number;
  latency: Uint8Array | null;
  ttft: Uint8Array | null;
  [measure: string]: number | Uint8Array | null;
}

export function dashboardBuckets(
  statement: (sql: string) => Statement,
  scope: Scope,
  edges: readonly number[],
): DashboardPoint[] {
  const grains = dimensionOf(scope) === null ? [] : alignedGrains(edges);
  const cellMs = grains.length > 0 ? grains[0]!.ms : ROW_CELLS_MS.find((ms) => edges.every((e) => e % ms === 0))!;
  const { sql, params } = windowSql(scope, grains);
  const rows = statement(sql).all({ ...params, cell: cellMs }) as CellRow[];

  const sums = edges.slice(1).map(() => ({
    measures: BOARD_MEASURES.map(() => 0),
    latency: new Map() as Bins,
    ttft: new Map() as Bins,
  }));
  for (const row of rows) {
    const bucket = sums[bucketOf(edges, row.cell)]!;
    MEASURE_COLUMNS.forEach((column, i) => (bucket.measures[i]! += row[column] as number));
    if (row.latency) addEncoded(bucket.latency, row.latency);
    if (row.ttft) addEncoded(bucket.ttft, row.ttft);
  }
  return sums.map(({ measures, latency, ttft }) => ({
    measures,
    latency: quantiles(latency, PERCENTILES),
    ttft: quantiles(ttft, PERCENTILES),
  }));
}

/** The bucket a cell starting at `cell` is in: the last edge at or before it (cells start at or after the first). */
function bucketOf(edges: readonly number[], cell: number): number {
  let low = 0;
  let high = edges.length - 2;
  while (low < high) {
    const mid = (low + high + 1) >> 1;
    if (edges[mid]! <= cell) low = mid;
    else high = mid - 1;
  }
  return low;
}

const CACHE_SUMS = ['prompt_tokens', 'prompt_rows', 'cache_read', 'cache_write', 'cache_rows'];
const CACHE_RAW = [
  'TOTAL(prompt_tokens) AS prompt_tokens',
  'COUNT(prompt_tokens) AS prompt_rows',
  'TOTAL(cache_read_input_tokens) AS cache_read',
  'TOTAL(cache_creation_input_tokens) AS cache_write',
  'SUM(cache_read_input_tokens IS NOT NULL OR cache_creation_input_tokens IS NOT NULL) AS cache_rows',
].join(', ');

/** Prompt and cache tokens by model over the window: the model cells, or the rows when a project or key narrows it. */
export function cacheByModel(statement: (sql: string) => Statement, scope: Scope): CacheSums[] {
  const params: Record<string, unknown> = { orgId: scope.orgId };
  let sql: string;
  if (scope.projectId === undefined && scope.keyId === undefined) {
    const parts = segments(scope.from, scope.to + 1, BOARD_GRAINS).map((part, index) => {
      params[`from${index}`] = part.from;
      params[`to${index}`] = part.to;
      if (!part.grain) {
        return `SELECT model, ${CACHE_RAW} FROM requests WHERE ${rawWhere(scope, index)} GROUP BY model`;
      }
      const model = scope.model === undefined ? '' : 'AND value = @model';
      return `SELECT value AS model, ${CACHE_SUMS.map((m) => `SUM(${m}) AS ${m}`).join(', ')} FROM ${part.grain.board}
        WHERE org_id = @orgId AND dim = ${DIM_CODE.model} ${model} AND bucket >= @from${index} AND bucket < @to${index}
        GROUP BY value`;
    });
    sql = parts.join('\nUNION ALL\n');
  } else {
    params.from0 = scope.from;
    params.to0 = scope.to + 1;
    sql = `SELECT model, ${CACHE_RAW} FROM requests WHERE ${rawWhere(scope, 0)} GROUP BY model`;
  }
  for (const name of ['projectId', 'keyId', 'model'] as const)
    if (scope[name] !== undefined) params[name] = scope[name];
  return statement(
    `SELECT model, ${CACHE_SUMS.map((m) => `SUM(${m}) AS ${m}`).join(', ')} FROM (${sql}) GROUP BY model ORDER BY model`,
  ).all(params) as CacheSums[];
}
