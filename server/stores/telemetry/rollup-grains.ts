/**
 * The rollup tables' grains (migrations/002_rollups.sql, 004_dimension_rollups.sql,
 * 006_minute_rollups.sql, 008_dashboard_rollups.sql, 009_cache_rollups.sql): each grain's width and its tables. The store writes them
 * (rollup-sums.ts, rollup-writer.ts); analytics reads them (server/analytics/windows.ts).
 */

export interface Grain {
  ms: number;
  /** Usage by project, key and model: summaries and timeseries; null: only by one dimension. */
  usage: string | null;
  /** The same usage by one dimension at a time (or none): reads that name at most one. */
  dims: string;
  /** The dimensions (`dim` codes: organisation 0, project 1, key 2, model 3) whose cells `dims` holds. */
  dimCodes: readonly number[];
  /** Request counts by those and status class and termination reason: request-log totals. */
  outcome: string | null;
  /** The dashboard's cells by one dimension: outcomes, tokens by kind, latency sketches. */
  board: string | null;
  /** Prompt and cache tokens by project, key and model: the dashboard's cache by model, in any scope. */
  cache: string | null;
}

/** The `dim` code of an organisation's own totals, and every dimension's. */
export const ORG_DIM = 0;
const EVERY_DIM = [ORG_DIM, 1, 2, 3] as const;

/** Coarsest first. Cells are aligned to the epoch, as timeseries buckets are. */
export const GRAINS: readonly Grain[] = [
  {
    ms: 86_400_000,
    usage: 'rollup_day',
    dims: 'rollup_dim_day',
    dimCodes: EVERY_DIM,
    outcome: 'rollup_outcome_day',
    board: 'rollup_board_day',
    cache: 'rollup_cache_day',
  },
  {
    ms: 3_600_000,
    usage: 'rollup_hour',
    dims: 'rollup_dim_hour',
    dimCodes: EVERY_DIM,
    outcome: 'rollup_outcome_hour',
    board: 'rollup_board_hour',
    cache: 'rollup_cache_hour',
  },
  // Finer full cells cost the import more than they save: five minutes serves the charts.
  {
    ms: 300_000,
    usage: 'rollup_5m',
    dims: 'rollup_dim_5m',
    dimCodes: EVERY_DIM,
    outcome: null,
    board: 'rollup_board_5m',
    cache: null,
  },
  // The organisation's totals by the minute: a short window (the last hour) reads a minute of
  // rows at either edge, not five. By project, key or model it would read five minutes of that
  // one value's rows (an index's range) instead: minute cells of every dimension were 103 bytes a
  // row of a million over a month, the largest table of the store (migrations/021_org_minutes.sql).
  { ms: 60_000, usage: null, dims: 'rollup_dim_1m', dimCodes: [ORG_DIM], outcome: null, board: null, cache: null },
];

/** The finest grain whose `dims` table holds the cells of `dim`. */
export function finestDimMs(dim: number): number {
  return GRAINS.filter((grain) => grain.dimCodes.includes(dim)).at(-1)!.ms;
}

/** The grains of the request-log counts. */
export const OUTCOME_GRAINS: readonly Grain[] = GRAINS.filter((grain) => grain.outcome !== null);

/** The grains of the dashboard's cells. */
export const BOARD_GRAINS: readonly Grain[] = GRAINS.filter((grain) => grain.board !== null);

/** The grains of the prompt cache's cells. */
export const CACHE_GRAINS: readonly Grain[] = GRAINS.filter((grain) => grain.cache !== null);
