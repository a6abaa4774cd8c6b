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
  /** Request counts by those and status class and termination reason: request-log totals. */
  outcome: string | null;
  /** The dashboard's cells by one dimension: outcomes, tokens by kind, latency sketches. */
  board: string | null;
  /** Prompt and cache tokens by project, key and model: the dashboard's cache by model, in any scope. */
  cache: string | null;
}

/** Coarsest first. Cells are aligned to the epoch, as timeseries buckets are. */
export const GRAINS: readonly Grain[] = [
  {
    ms: 86_400_000,
    usage: 'rollup_day',
    dims: 'rollup_dim_day',
    outcome: 'rollup_outcome_day',
    board: 'rollup_board_day',
    cache: 'rollup_cache_day',
  },
  {
    ms: 3_600_000,
    usage: 'rollup_hour',
    dims: 'rollup_dim_hour',
    outcome: 'rollup_outcome_hour',
    board: 'rollup_board_hour',
    cache: 'rollup_cache_hour',
  },
  // Finer full cells cost the import more than they save: five minutes serves the charts.
  { ms: 300_000, usage: 'rollup_5m', dims: 'rollup_dim_5m', outcome: null, board: 'rollup_board_5m', cache: null },
  // By one dimension, a minute is ~35 cells whatever the traffic: short windows (the last
  // hour) then read a minute of rows at either edge, not five.
  { ms: 60_000, usage: null, dims: 'rollup_dim_1m', outcome: null, board: null, cache: null },
];

/**
 * Days the fine grains' usage cells (finer than an hour) are kept, counted back from the start of
 * the current UTC day. At ten million rows over 30 days they took ~41 of the store's ~305 bytes a
 * row, and only short windows and the edges of long ones read them: a window older than this
 * reads its partial hours from the rows instead (windows.ts), exact but slower, and retention's
 * horizon from whole hours. Deleted in the background (fine-cells.ts), never written for older
 * rows. The dashboard's five-minute cells are kept: its buckets follow the reporting zone, whose
 * edges fall between hours on every day in a +05:30 or +05:45 zone (a month's dashboard would
 * read half its rows).
 */
export const FINE_CELL_DAYS = 3;

const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;

/** Whether a grain is finer than an hour: its usage cells are kept for `FINE_CELL_DAYS` only. */
export const isFine = (grain: { ms: number }): boolean => grain.ms < HOUR_MS;

/** The tables kept for `FINE_CELL_DAYS` only: the fine grains' usage cells, in full and by one dimension. */
export const THINNED_TABLES: readonly string[] = GRAINS.filter(isFine).flatMap((grain) =>
  grain.usage === null ? [grain.dims] : [grain.usage, grain.dims],
);

/** From when the fine grains' usage cells are kept at `now` (epoch ms): the start of a UTC day. */
export function fineCellsSince(now: number): number {
  return Math.floor(now / DAY_MS) * DAY_MS - FINE_CELL_DAYS * DAY_MS;
}

/** The grains of the request-log counts. */
export const OUTCOME_GRAINS: readonly Grain[] = GRAINS.filter((grain) => grain.outcome !== null);

/** The grains of the dashboard's cells. */
export const BOARD_GRAINS: readonly Grain[] = GRAINS.filter((grain) => grain.board !== null);

/** The grains of the prompt cache's cells. */
export const CACHE_GRAINS: readonly Grain[] = GRAINS.filter((grain) => grain.cache !== null);
