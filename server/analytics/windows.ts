import { GRAINS, isFine, type Grain } from '../stores/telemetry/rollup-grains.js';

/**
 * How a window of the request log is read: whole cells of the coarsest rollup grain that
 * fits in the middle, finer grains toward the edges, raw rows for what is left (the
 * partial minutes at either end). Every row of the window falls in exactly one segment,
 * so sums and counts over the segments are those over the rows. The grains are the
 * store's (rollup-grains.ts).
 */

/** Rows with `from <= ts < to`. */
export interface Span {
  from: number;
  to: number;
}

/**
 * Rows with `from <= ts < to`, read from a rollup table or, when `grain` is null, from the rows;
 * with `less` (`complemented`), the cells less the rows of those spans inside them.
 */
export interface Segment extends Span {
  grain: Grain | null;
  less?: readonly Span[];
}

const floorTo = (ms: number, grain: number) => ms - (((ms % grain) + grain) % grain);

/**
 * Splits the half-open window [from, to) over `grains` (coarsest first). A timeseries
 * passes only the grains that divide its interval, so no cell straddles two buckets. Given
 * `fineFrom`, the fine grains' cells (finer than an hour) are read from it on only: the usage
 * cells the store keeps from there (fine-cells.ts; the dashboard's are kept whole and read
 * without it). Before it, what the coarser grains leave is read from the rows.
 */
export function segments(from: number, to: number, grains: readonly Grain[] = GRAINS, fineFrom = -Infinity): Segment[] {
  if (from >= to) return [];
  const [grain, ...finer] = grains;
  if (!grain) return [{ grain: null, from, to }];
  if (isFine(grain) && from < fineFrom) {
    // Grains come coarsest first: every grain left is fine too.
    const edge = Math.min(fineFrom, to);
    return [{ grain: null, from, to: edge }, ...segments(edge, to, grains, fineFrom)];
  }
  const start = floorTo(from + grain.ms - 1, grain.ms);
  const end = floorTo(to, grain.ms);
  if (start >= end) return segments(from, to, finer, fineFrom);
  return [
    ...segments(from, start, finer, fineFrom),
    { grain, from: start, to: end },
    ...segments(end, to, finer, fineFrom),
  ];
}

/**
 * As `segments`, for an organisation whose rows are kept only from `horizon` on (its retention,
 * domain/retention.ts): before the horizon the window is read from whole cells alone, whose
 * rows are deleted or about to be, so that an answer does not change as they go. A window read
 * from rows alone (`cellGrains` gave none) then starts at the horizon.
 */
export function keptSegments(
  from: number,
  to: number,
  grains: readonly Grain[],
  horizon: number | undefined,
  fineFrom?: number,
): Segment[] {
  if (horizon === undefined || horizon <= from) return segments(from, to, grains, fineFrom);
  const edge = Math.min(horizon, to);
  const past = segments(from, edge, grains, fineFrom).filter((part) => part.grain !== null);
  return [...past, ...segments(edge, to, grains, fineFrom)];
}

/**
 * `parts` with each run of rows that lies inside one cell of `grains` read as that cell less the
 * rows of it outside the window, where those span less time. An old window's partial first
 * hour, whose fine cells are gone (fine-cells.ts), then costs at most half an hour of rows
 * instead of up to a whole one, as does either edge of a request-log count (no outcome cell is
 * finer than an hour). Counts and integer sums stay exact; a sum of REAL (total_ms) differs
 * from the rows' own by rounding alone, as any sum in another order does. Rows before `horizon`
 * may be deleted and are never taken away; fine cells before `fineFrom` are gone. Only for reads
 * whose cells can be subtracted from: not the dashboard's sketches.
 */
export function complemented(
  parts: readonly Segment[],
  grains: readonly Grain[],
  { horizon = -Infinity, fineFrom = -Infinity }: { horizon?: number | undefined; fineFrom?: number | undefined } = {},
): Segment[] {
  return parts.map((part) => {
    if (part.grain !== null) return part;
    const inside = part.to - part.from;
    let best = part;
    let cost = inside;
    for (const grain of grains) {
      const from = floorTo(part.from, grain.ms);
      const to = from + grain.ms;
      if (part.to > to || from < horizon || (isFine(grain) && from < fineFrom) || grain.ms - inside >= cost) continue;
      const less = [
        { from, to: part.from },
        { from: part.to, to },
      ].filter((span) => span.from < span.to);
      best = { grain, from, to, less };
      cost = grain.ms - inside;
    }
    return best;
  });
}

/** The grains whose cells lie wholly inside one bucket of `intervalMs`. */
export function grainsFor(intervalMs: number): Grain[] {
  return GRAINS.filter((grain) => intervalMs % grain.ms === 0);
}

/**
 * The grains a scope (query-types.ts) may read cells of: `grains`, or none when it names a target
 * or an API, or is grouped by API. No rollup or cell carries `served_by` or `api` (a cell sums
 * every target's and every API's rows), so such a window is read from its rows alone, which
 * answer it exactly: one raw segment from `segments`.
 */
export function cellGrains<G>(
  scope: { servedBy?: string; api?: string },
  grains: readonly G[],
  groupBy?: string | null,
): readonly G[] {
  return scope.servedBy === undefined && scope.api === undefined && groupBy !== 'api' ? grains : [];
}
