/**
 * How a window of the request log is read: whole cells of the coarsest rollup grain that
 * fits in the middle, finer grains toward the edges, raw rows for what is left (the
 * partial minutes at either end). Every row of the window falls in exactly one segment,
 * so sums and counts over the segments are those over the rows.
 */

export interface Grain {
  ms: number;
  /** Usage by project, key and model: summaries and timeseries; null: only by one dimension. */
  usage: string | null;
  /** The same usage by one dimension at a time (or none): reads that name at most one. */
  dims: string;
  /** Request counts by those and status class and termination reason: request-log totals. */
  outcome: string | null;
}

/** Coarsest first. Cells are aligned to the epoch, as timeseries buckets are. */
export const GRAINS: readonly Grain[] = [
  { ms: 86_400_000, usage: 'rollup_day', dims: 'rollup_dim_day', outcome: 'rollup_outcome_day' },
  { ms: 3_600_000, usage: 'rollup_hour', dims: 'rollup_dim_hour', outcome: 'rollup_outcome_hour' },
  // Finer full cells cost the import more than they save: five minutes serves the charts.
  { ms: 300_000, usage: 'rollup_5m', dims: 'rollup_dim_5m', outcome: null },
  // By one dimension, a minute is ~35 cells whatever the traffic: short windows (the last
  // hour) then read a minute of rows at either edge, not five.
  { ms: 60_000, usage: null, dims: 'rollup_dim_1m', outcome: null },
];

/** The grains of the request-log counts. */
export const OUTCOME_GRAINS: readonly Grain[] = GRAINS.filter((grain) => grain.outcome !== null);

/** Rows with `from <= ts < to`, read from a rollup table or, when `grain` is null, from the rows. */
export interface Segment {
  grain: Grain | null;
  from: number;
  to: number;
}

const floorTo = (ms: number, grain: number) => ms - (((ms % grain) + grain) % grain);

/**
 * Splits the half-open window [from, to) over `grains` (coarsest first). A timeseries
 * passes only the grains that divide its interval, so no cell straddles two buckets.
 */
export function segments(from: number, to: number, grains: readonly Grain[] = GRAINS): Segment[] {
  if (from >= to) return [];
  const [grain, ...finer] = grains;
  if (!grain) return [{ grain: null, from, to }];
  const start = floorTo(from + grain.ms - 1, grain.ms);
  const end = floorTo(to, grain.ms);
  if (start >= end) return segments(from, to, finer);
  return [...segments(from, start, finer), { grain, from: start, to: end }, ...segments(end, to, finer)];
}

/** The grains whose cells lie wholly inside one bucket of `intervalMs`. */
export function grainsFor(intervalMs: number): Grain[] {
  return GRAINS.filter((grain) => intervalMs % grain.ms === 0);
}
