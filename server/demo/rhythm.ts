import { type Random, unitHash } from './random.js';

export const HOUR_MS = 3_600_000;
export const DAY_MS = 24 * HOUR_MS;

/** Rows served before this instant (UTC) lack prompt_tokens and the upstream block. */
export const LEGACY_CUTOFF_MS = Date.UTC(2026, 7, 24);
/** Share of rows placed in the two weeks before the cutoff when the window does not reach it. */
const LEGACY_TAIL_SHARE = 0.02;
const LEGACY_TAIL_DAYS = 14;

/** The customers work in Pakistan (UTC+5): their office hours set the rhythm. */
const LOCAL_OFFSET_MS = 5 * HOUR_MS;
/** Requests per hour by local hour of day, relative to the busiest. */
const BY_LOCAL_HOUR = [
  0.12, 0.08, 0.06, 0.05, 0.05, 0.07, 0.12, 0.25, 0.5, 0.8, 0.95, 1, 0.95, 0.75, 0.9, 1, 0.95, 0.85, 0.65, 0.5, 0.42,
  0.35, 0.25, 0.18,
];
/** By local day of week, Sunday first: the weekend is Saturday and Sunday. */
const BY_LOCAL_DAY = [0.35, 1, 1.05, 1.05, 1, 0.9, 0.45];

export interface TrafficWindow {
  start: number;
  end: number;
  rows: number;
}

/**
 * The last `days` up to `now`, plus a small tail in the two weeks before the legacy
 * cutoff when the window starts after it, so that rows of that era always exist.
 */
export function trafficWindows(now: number, days: number, rows: number): TrafficWindow[] {
  const start = now - days * DAY_MS;
  if (start <= LEGACY_CUTOFF_MS) return [{ start, end: now, rows }];
  const tail = Math.max(1, Math.round(rows * LEGACY_TAIL_SHARE));
  return [
    { start: LEGACY_CUTOFF_MS - LEGACY_TAIL_DAYS * DAY_MS, end: LEGACY_CUTOFF_MS, rows: tail },
    { start, end: now, rows: rows - tail },
  ];
}

/** Relative traffic of the hour starting at `hourStart`. Stateless, so two passes agree. */
export function hourWeight(seed: number, hourStart: number): number {
  const local = new Date(hourStart + LOCAL_OFFSET_MS);
  const hour = local.getUTCHours();
  const weekday = local.getUTCDay();
  let weight = (BY_LOCAL_HOUR[hour] ?? 0) * (BY_LOCAL_DAY[weekday] ?? 0);
  // Friday prayers empty the offices for an hour after midday.
  if (weekday === 5 && hour === 13) weight *= 0.5;
  const day = Math.floor((hourStart + LOCAL_OFFSET_MS) / DAY_MS);
  weight *= 0.85 + 0.3 * unitHash(seed, day);
  // Now and then a batch job or a launch doubles an hour.
  const hourIndex = Math.floor(hourStart / HOUR_MS);
  if (unitHash(seed ^ 0x2f6b, hourIndex) < 0.02) weight *= 2.2;
  return weight;
}

/** A provider outage hour: a few per month, when one provider answers 503 far more often. */
export function isIncidentHour(seed: number, ts: number): boolean {
  return unitHash(seed ^ 0x7c19, Math.floor(ts / HOUR_MS)) < 0.004;
}

/**
 * Request times in ascending order, spread over the windows by the hourly weights.
 * Each hour's count comes from rounding the running total, so the counts add up to
 * exactly the rows asked for; within an hour, times are sorted uniforms drawn one at a
 * time, so nothing but the current hour's position is held in memory.
 */
export function* requestTimes(random: Random, seed: number, windows: readonly TrafficWindow[]): Generator<number> {
  for (const window of windows) {
    if (window.rows <= 0 || window.end <= window.start) continue;
    const slices = function* () {
      for (let hour = Math.floor(window.start / HOUR_MS) * HOUR_MS; hour < window.end; hour += HOUR_MS) {
        const from = Math.max(hour, window.start);
        const to = Math.min(hour + HOUR_MS, window.end);
        yield { from, to, weight: (hourWeight(seed, hour) * (to - from)) / HOUR_MS };
      }
    };
    let total = 0;
    for (const slice of slices()) total += slice.weight;
    let running = 0;
    let emitted = 0;
    for (const slice of slices()) {
      running += slice.weight;
      const target = Math.round((window.rows * running) / total);
      const count = target - emitted;
      emitted = target;
      let u = 0;
      for (let i = 0; i < count; i++) {
        // The next order statistic of the uniforms still to place (Rényi's representation).
        u = 1 - (1 - u) * Math.pow(random.next(), 1 / (count - i));
        yield Math.min(slice.to - 1, slice.from + Math.floor(u * (slice.to - slice.from)));
      }
    }
  }
}
