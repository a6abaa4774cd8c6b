/**
 * The analytics timeseries as the chart draws it. The server sends only the buckets and
 * groups that had rows; this fills the gaps (a missing bucket is a known zero for counts
 * and sums, but unknown for means) and, when there are more buckets than the chart has
 * pixels, combines neighbouring buckets so no more points are drawn than can be seen.
 */

export const METRICS = ['volume', 'latency', 'ttft', 'tok_s', 'token_usage'] as const;
export type Metric = (typeof METRICS)[number];

/** `api`: the gateway's API the requests came in on (beyond the contract; the server reads it from the rows). */
export const GROUP_BYS = ['project', 'key', 'model', 'api'] as const;
export type GroupBy = (typeof GROUP_BYS)[number];

/**
 * Interval choices that would give more buckets than this (per series) are not offered:
 * a chart shows a few thousand points at most.
 */
export const MAX_BUCKETS = 100_000;

/**
 * More values than this (buckets times series) are refused before filling: every one is
 * held in memory, and a chart of a million values draws no better than one of a thousand.
 */
export const MAX_CELLS = 1_000_000;

/** How many epoch-aligned buckets of `intervalMs` a window of `rangeMs` ending now touches (at most). */
export function bucketCount(rangeMs: number, intervalMs: number): number {
  return Math.floor(rangeMs / intervalMs) + 2;
}

const OFFSET = /(Z|[+-]\d{2}:?\d{2})$/i;

/** A bucket as the server writes it ("2026-11-22T07:00:00", UTC without offset) in epoch ms. */
export function bucketMs(text: string): number | null {
  const value = Date.parse(OFFSET.test(text) ? text : `${text}Z`);
  return Number.isNaN(value) ? null : value;
}

/** The start of the epoch-aligned bucket holding `ms`: the server buckets with `ts - ts % interval`. */
export function alignDown(ms: number, intervalMs: number): number {
  return Math.floor(ms / intervalMs) * intervalMs;
}

/** Counts and sums: a bucket without rows had none of them. Means: nothing to average, so unknown. */
export function emptyBucketValue(metric: Metric): 0 | null {
  return metric === 'volume' || metric === 'token_usage' ? 0 : null;
}

/** One row of the server's answer. */
export interface RawPoint {
  bucket: string;
  group: string | null;
  value: number;
}

export interface Series {
  /** The raw project id, key id or model; null is the rows without one (or every row, ungrouped). */
  group: string | null;
  /** One value per time of the table; null is unknown (the line breaks), never drawn as 0. */
  values: (number | null)[];
}

export interface SeriesTable {
  /** Start of each point's bucket, epoch ms, ascending and evenly spaced by `stepMs`. */
  times: number[];
  /** Width of one point. */
  stepMs: number;
  series: Series[];
}

export interface FillOptions {
  metric: Metric;
  intervalMs: number;
  /** The window asked for, [now - range, now], in epoch ms. */
  fromMs: number;
  toMs: number;
  /** Ungrouped, there is always one series (of zeros or unknowns when the window is empty). */
  grouped: boolean;
}

/**
 * Every bucket of the window for every group, the server's values where it sent one and
 * the metric's empty value elsewhere. A bucket outside the window the client computed
 * (the server's clock differs a little) widens it rather than being dropped.
 */
export function fillGaps(points: readonly RawPoint[], options: FillOptions): SeriesTable {
  const { metric, intervalMs } = options;
  if (!(intervalMs > 0)) throw new Error('the interval must be positive');
  const parsed: { ms: number; group: string | null; value: number }[] = [];
  for (const point of points) {
    const ms = bucketMs(point.bucket);
    if (ms === null || !Number.isFinite(point.value)) continue;
    parsed.push({ ms: alignDown(ms, intervalMs), group: point.group, value: point.value });
  }
  let first = alignDown(Math.min(options.fromMs, options.toMs), intervalMs);
  let last = alignDown(Math.max(options.fromMs, options.toMs), intervalMs);
  for (const point of parsed) {
    if (point.ms < first) first = point.ms;
    if (point.ms > last) last = point.ms;
  }
  const count = Math.round((last - first) / intervalMs) + 1;
  const seriesCount = options.grouped ? new Set(parsed.map((point) => point.group)).size : 1;
  if (count * seriesCount > MAX_CELLS) {
    throw new Error(
      `${count.toLocaleString()} buckets × ${seriesCount.toLocaleString()} series are more values than the chart can hold`,
    );
  }
  const times = Array.from({ length: count }, (_, i) => first + i * intervalMs);

  const groups = new Map<string | null, (number | null)[]>();
  const empty = emptyBucketValue(metric);
  const seriesOf = (group: string | null) => {
    let values = groups.get(group);
    if (!values) {
      values = new Array<number | null>(count).fill(empty);
      groups.set(group, values);
    }
    return values;
  };
  if (!options.grouped) seriesOf(null);
  for (const point of parsed) {
    // Ungrouped answers carry group null; anything else would be a second series of one.
    seriesOf(options.grouped ? point.group : null)[Math.round((point.ms - first) / intervalMs)] = point.value;
  }
  const series = [...groups.entries()]
    .sort(([a], [b]) => (a === b ? 0 : a === null ? 1 : b === null ? -1 : a.localeCompare(b)))
    .map(([group, values]) => ({ group, values }));
  return { times, stepMs: intervalMs, series };
}

export interface Downsampled extends SeriesTable {
  /** Buckets combined into each point: 1 when none were. */
  perPoint: number;
  /** Buckets before combining. */
  buckets: number;
}

/**
 * At most `maxPoints` points per series: runs of `k` neighbouring buckets, with the
 * smallest `k` that fits, become one point whose value is the mean of the run's known
 * values (unknown when none is known). Fewer than one pixel still draws one point.
 */
export function downsample(table: SeriesTable, maxPoints: number): Downsampled {
  const limit = Math.max(1, Math.floor(Number.isFinite(maxPoints) ? maxPoints : 1));
  const n = table.times.length;
  if (n <= limit) return { ...table, perPoint: 1, buckets: n };
  const k = Math.ceil(n / limit);
  const bins = Math.ceil(n / k);
  const times = Array.from({ length: bins }, (_, i) => table.times[i * k]!);
  const series = table.series.map(({ group, values }) => {
    const combined = new Array<number | null>(bins);
    for (let bin = 0; bin < bins; bin++) {
      let sum = 0;
      let known = 0;
      for (let i = bin * k; i < Math.min(n, (bin + 1) * k); i++) {
        const value = values[i];
        if (value !== null && value !== undefined) {
          sum += value;
          known += 1;
        }
      }
      combined[bin] = known === 0 ? null : sum / known;
    }
    return { group, values: combined };
  });
  return { times, stepMs: table.stepMs * k, series, perPoint: k, buckets: n };
}

/** Rows for the chart library: `{t, s0, s1, ...}`, one per time, `s<i>` the i-th series. */
export function chartRows(table: SeriesTable): Record<string, number | null>[] {
  return table.times.map((t, i) => {
    const row: Record<string, number | null> = { t };
    table.series.forEach((series, s) => {
      row[`s${s}`] = series.values[i] ?? null;
    });
    return row;
  });
}
