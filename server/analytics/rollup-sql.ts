import { GRAINS, OUTCOME_GRAINS, type Grain } from '../stores/telemetry/rollup-grains.js';
import type { FilterColumn } from '../stores/telemetry/request-rows.js';
import type { CellGroupBy, GroupBy, RequestFilter, Scope } from './query-types.js';
import type { Dialect } from './sql.js';
import { cellGrains, complemented, grainsFor, keptSegments, type Segment, type Span } from './windows.js';

/**
 * SQL that reads a window through the rollups (see windows.ts): one sub-select per
 * segment, raw rows or rollup cells, each giving the same columns of sums and counts,
 * for an outer query to add up. Only filters the rollups are keyed by may be used here, and a
 * target (`servedBy`) or an API (`api`, a filter or the grouping), which no rollup carries: such a
 * window is read from the rows alone.
 */

export type RollupFilter = Scope & Pick<RequestFilter, 'statusClass' | 'terminationReason' | 'models'>;

export interface RollupSelect {
  /** Request counts only, by outcome too (the request log's total), or usage figures. */
  counts?: boolean;
  /** Bucket width of a timeseries; absent for one total over the window. */
  intervalMs?: number;
  groupBy?: GroupBy | null;
}

const GROUP_COLUMN: Record<GroupBy, string> = { project: 'project_id', key: 'key_id', model: 'model', api: 'api' };

/** A group's columns in the order of the rollup key after the bucket (a key belongs to one project); null: no such prefix. */
const CELL_ORDER: Record<GroupBy, string[] | null> = {
  project: ['project_id'],
  key: ['project_id', 'key_id'],
  model: null,
  // No cell carries it: rollupSource gives a read grouped by it no cells.
  api: null,
};

// A row's generation time: after the first token when that is known, else after dispatch.
const GENERATION_MS = 'total_ms - COALESCE(ttft_ms, pre_dispatch_ms)';
const COUNTS_FOR_SPEED = `tokens_generated > 0 AND ${GENERATION_MS} > 0`;

/** One raw row as a rollup cell of one request. */
const RAW_MEASURES = `1 AS requests, total_ms, CASE WHEN ttft_ms IS NULL THEN 0 ELSE 1 END AS ttft_count,
  COALESCE(ttft_ms, 0) AS ttft_ms,
  CASE WHEN ${COUNTS_FOR_SPEED} THEN tokens_generated ELSE 0 END AS speed_tokens,
  CASE WHEN ${COUNTS_FOR_SPEED} THEN ${GENERATION_MS} ELSE 0 END AS speed_ms,
  total_tokens AS tokens, cost_micro`;
const CELL_MEASURES = 'requests, total_ms, ttft_count, ttft_ms, speed_tokens, speed_ms, tokens, cost_micro';
const COUNT_MEASURES = 'requests';

/** A cell whose model is one of `@models` (a JSON array). */
const modelsClause = (dialect: Dialect) => `model IN (${dialect.valuesOf('models')})`;

function dimensionClauses(dialect: Dialect, filter: RollupFilter, raw: boolean): string[] {
  const clauses: string[] = [];
  // Rows hold these as codes on SQLite (an index finds a code, not its text); cells as text.
  const is = (column: FilterColumn, param: string) => (raw ? dialect.rowIs(column, param) : `${column} = @${param}`);
  if (filter.projectId !== undefined) clauses.push(is('project_id', 'projectId'));
  if (filter.keyId !== undefined) clauses.push(is('key_id', 'keyId'));
  if (filter.model !== undefined) clauses.push(is('model', 'model'));
  if (filter.models !== undefined) clauses.push(raw ? dialect.rowIn('model', 'models') : modelsClause(dialect));
  if (filter.statusClass !== undefined) {
    clauses.push(raw ? 'status >= @statusFrom AND status < @statusTo' : 'status_class = @statusClass');
  }
  if (filter.terminationReason !== undefined) clauses.push('termination_reason = @terminationReason');
  // Rows only: rollupSource gives a scope with a target or an API no cells.
  if (filter.servedBy !== undefined) clauses.push('served_by = @servedBy');
  if (filter.api !== undefined) clauses.push('api = @api');
  return clauses;
}

/** Codes of rollup_dim_<grain>'s `dim` (migrations/004_dimension_rollups.sql). */
const DIM_CODE: Record<CellGroupBy | 'org', number> = { org: 0, project: 1, key: 2, model: 3 };
const DIM_FILTER: Record<CellGroupBy, 'projectId' | 'keyId' | 'model'> = {
  project: 'projectId',
  key: 'keyId',
  model: 'model',
};

/**
 * The one dimension a usage read names, by filter or group ('org': none), when the cells
 * of rollup_dim_<grain> can answer it; null when it names more, or groups by API (no cell has it).
 */
function soleDimension(filter: RollupFilter, select: RollupSelect): CellGroupBy | 'org' | null {
  if (
    select.counts ||
    filter.statusClass !== undefined ||
    filter.terminationReason !== undefined ||
    filter.models !== undefined ||
    select.groupBy === 'api'
  ) {
    return null;
  }
  const named = new Set<CellGroupBy>();
  for (const dim of Object.keys(DIM_FILTER) as CellGroupBy[]) if (filter[DIM_FILTER[dim]] !== undefined) named.add(dim);
  if (select.groupBy) named.add(select.groupBy);
  if (named.size > 1) return null;
  return [...named][0] ?? 'org';
}

function oneDimensionClauses(filter: RollupFilter, dim: CellGroupBy | 'org'): string[] {
  const clauses = [`dim = ${DIM_CODE[dim]}`];
  if (dim !== 'org' && filter[DIM_FILTER[dim]] !== undefined) clauses.push(`value = @${DIM_FILTER[dim]}`);
  return clauses;
}

/**
 * Whether a timeseries segment of `grain` gives each (bucket, group) in one row, in buckets
 * no other segment reaches: cells as wide as the interval lie inside the window's middle
 * (windows.ts), and there is one per bucket and value by one dimension, or one per bucket
 * summed without a group. (Full cells summed by key are one per project and key, and keys
 * unknown in two projects would share a point.)
 */
function onePerPoint(part: Segment, select: RollupSelect, dim: CellGroupBy | 'org' | null): boolean {
  const { grain } = part;
  if (!grain || part.less || select.counts || grain.ms !== select.intervalMs) return false;
  return dim !== null || !select.groupBy;
}

function subSelect(
  dialect: Dialect,
  grain: Grain | null,
  index: string,
  filter: RollupFilter,
  select: RollupSelect,
  dim: CellGroupBy | 'org' | null,
): string {
  const time = grain ? 'bucket' : 'ts';
  const byDim = grain !== null && dim !== null;
  const where = [
    grain ? 'org_id = @orgId' : dialect.rowIs('org_id', 'orgId'),
    `${time} >= @from${index}`,
    `${time} < @to${index}`,
    ...(byDim ? oneDimensionClauses(filter, dim) : dimensionClauses(dialect, filter, !grain)),
  ].join(' AND ');
  const groupColumn = select.groupBy ? (byDim ? 'value' : GROUP_COLUMN[select.groupBy]) : null;
  // Rollups store a null project or key as '': give it back as null (a model is never null: '' is one).
  const nullable = grain && select.groupBy !== 'model';
  const group = groupColumn ? (nullable ? `NULLIF(${groupColumn}, '') AS grp` : `${groupColumn} AS grp`) : null;
  const bucket = select.intervalMs === undefined ? null : `${time} - ${time} % @intervalMs`;

  if (!grain) {
    const measures = select.counts ? '1 AS requests' : RAW_MEASURES;
    return `SELECT ${[bucket && `${bucket} AS bucket`, group, measures].filter(Boolean).join(', ')} FROM requests WHERE ${where}`;
  }
  // rollupSource gives a grain without full cells only to reads by one dimension.
  const table = select.counts ? grain.outcome! : byDim ? grain.dims : grain.usage!;
  // rollup_dim_<grain> holds one cell per bucket and value of its dimension.
  const order = byDim ? ['value'] : select.groupBy ? CELL_ORDER[select.groupBy] : [];
  if (bucket === null || order === null || (byDim && grain.ms === select.intervalMs)) {
    const measures = select.counts ? COUNT_MEASURES : CELL_MEASURES;
    const cell = bucket === null ? null : grain.ms === select.intervalMs ? 'bucket' : `${bucket} AS bucket`;
    return `SELECT ${[cell, group, measures].filter(Boolean).join(', ')} FROM ${table} WHERE ${where}`;
  }
  // A timeseries sums each segment's cells by bucket and group first, where the cells come
  // in that order from the table's key ((bucket, project, key, model), or (dim, bucket,
  // value)) and need no sort: the outer sum then sees a few rows per bucket instead of
  // every cell. Grouping the full cells by model would need a sort of every cell here and
  // again outside, so it is left to the outer sum.
  const cell = grain.ms === select.intervalMs ? 'bucket' : bucket;
  const sums = CELL_MEASURES.split(', ')
    .map((m) => `SUM(${m}) AS ${m}`)
    .join(', ');
  return `SELECT ${[`${cell} AS bucket`, group, sums].filter(Boolean).join(', ')} FROM ${table}
    WHERE ${where} GROUP BY ${[cell, ...order].join(', ')}`;
}

/**
 * A complemented segment (windows.ts): its cells and, negated, the rows of `less`, summed by
 * bucket and group. A group whose rows all lie in `less` sums to no request and is left out,
 * as the rows would leave it.
 */
function lessSelect(
  dialect: Dialect,
  grain: Grain,
  less: readonly Span[],
  index: string,
  filter: RollupFilter,
  select: RollupSelect,
  dim: CellGroupBy | 'org' | null,
): string {
  const keys = [select.intervalMs === undefined ? null : 'bucket', select.groupBy ? 'grp' : null].filter(
    (key) => key !== null,
  );
  const measures = select.counts ? [COUNT_MEASURES] : CELL_MEASURES.split(', ');
  const negated = less.map(
    (_, k) =>
      `SELECT ${[...keys, ...measures.map((m) => `-${m} AS ${m}`)].join(', ')}
      FROM (${subSelect(dialect, null, `${index}_${k}`, filter, select, dim)}) AS outside`,
  );
  const cells = subSelect(dialect, grain, index, filter, select, dim);
  return `SELECT ${[...keys, ...measures.map((m) => `SUM(${m}) AS ${m}`)].join(', ')}
    FROM (${[cells, ...negated].join('\nUNION ALL\n')}) AS cell
    ${keys.length > 0 ? `GROUP BY ${keys.join(', ')}` : ''} HAVING SUM(requests) > 0`;
}

export interface RollupSource {
  /** A sub-query giving rows of (bucket?, grp?, requests, total_ms, ttft_count, ttft_ms, speed_tokens, speed_ms, tokens, cost_micro). */
  sql: string;
  params: Record<string, unknown>;
  /**
   * Timeseries only: rows of the same columns, already one per (bucket, grp), in buckets
   * `sql` has none of (null when no segment qualifies), from the bucket in parameter `from` on.
   * Most of a chart's points come from here without being grouped again.
   */
  points: { sql: string; from: string } | null;
}

/** The window `[filter.from, filter.to]` (both edges included) as one UNION ALL of segments. */
export function rollupSource(dialect: Dialect, filter: RollupFilter, select: RollupSelect = {}): RollupSource {
  const dim = soleDimension(filter, select);
  const grains = cellGrains(
    filter,
    select.counts ? OUTCOME_GRAINS : select.intervalMs === undefined ? GRAINS : grainsFor(select.intervalMs),
    select.groupBy,
  ).filter((grain) => select.counts || dim !== null || grain.usage !== null);
  const found = complemented(
    keptSegments(filter.from, filter.to + 1, grains, filter.horizon, filter.fineFrom),
    grains,
    filter,
  );
  const params: Record<string, unknown> = { ...filter };
  if (filter.statusClass !== undefined) {
    params.statusFrom = filter.statusClass * 100;
    params.statusTo = filter.statusClass * 100 + 100;
  }
  if (select.intervalMs !== undefined) params.intervalMs = select.intervalMs;
  const selects = found.map((part, index) => {
    params[`from${index}`] = part.from;
    params[`to${index}`] = part.to;
    if (!part.grain || !part.less) return subSelect(dialect, part.grain, `${index}`, filter, select, dim);
    for (const [k, span] of part.less.entries()) {
      params[`from${index}_${k}`] = span.from;
      params[`to${index}_${k}`] = span.to;
    }
    return lessSelect(dialect, part.grain, part.less, `${index}`, filter, select, dim);
  });
  const whole = found.findIndex((part) => onePerPoint(part, select, dim));
  const points = whole < 0 ? null : { sql: selects.splice(whole, 1)[0]!, from: `from${whole}` };
  // An empty window (or one the points cover) still needs a source of the right shape: an empty range of rows.
  if (selects.length === 0) {
    const index = found.length;
    params[`from${index}`] = 0;
    params[`to${index}`] = 0;
    selects.push(subSelect(dialect, null, `${index}`, filter, select, dim));
  }
  for (const name of ['from', 'to', 'horizon', 'fineFrom']) delete params[name];
  return { sql: selects.join('\nUNION ALL\n'), params, points };
}

/** Whether a request-log filter can be counted from the rollups. */
export function countableFromRollups(filter: RequestFilter): boolean {
  return filter.minCostMicro === undefined && filter.search === undefined;
}
