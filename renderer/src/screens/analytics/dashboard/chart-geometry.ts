/**
 * The numbers behind a dashboard panel's chart, without any drawing: the value axis's ticks,
 * each series' band in a stack, and the runs of known values a line or an area is drawn along.
 * Kept apart from the SVG so each rule is tested on its own.
 */

/** Ticks from 0 up to at least `max` at a round step (1, 2, 2.5 or 5 times a power of ten). */
export function niceTicks(max: number, wanted = 5): number[] {
  if (!(max > 0) || !Number.isFinite(max)) return [0, 1];
  const rough = max / wanted;
  const power = 10 ** Math.floor(Math.log10(rough));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * power).find((candidate) => candidate >= rough) ?? 10 * power;
  // Rounded to the step's precision, so 0.1 + 0.2 reads "0.3" on the axis.
  const digits = Math.max(0, 1 - Math.floor(Math.log10(step)));
  const steps = Math.max(1, Math.ceil(max / step - 1e-9));
  return Array.from({ length: steps + 1 }, (_, i) => Number((i * step).toFixed(digits)));
}

/** One series' band at one bucket: from `low` to `high`; null where the series' value is unknown. */
export type Band = { low: number; high: number } | null;

/**
 * Each series' band at each bucket. Stacked, a series sits on the known values of those before
 * it (an unknown below counts as nothing and is a gap of its own); unstacked, each band starts at 0.
 */
export function bands(values: readonly (readonly (number | null)[])[], stacked: boolean): Band[][] {
  const count = values[0]?.length ?? 0;
  const base = new Array<number>(count).fill(0);
  return values.map((series) =>
    series.map((value, i) => {
      if (value === null) return null;
      const low = stacked ? base[i]! : 0;
      if (stacked) base[i] = low + value;
      return { low, high: low + value };
    }),
  );
}

/** The highest value the bands reach: the top the value axis must show. */
export function highest(all: readonly (readonly Band[])[]): number {
  let top = 0;
  for (const series of all) for (const band of series) if (band && band.high > top) top = band.high;
  return top;
}

/** The runs of consecutive known buckets, as [first, last] index pairs: a line breaks at an unknown. */
export function knownRuns(series: readonly Band[]): [number, number][] {
  const runs: [number, number][] = [];
  let start = -1;
  series.forEach((band, i) => {
    if (band && start < 0) start = i;
    if (!band && start >= 0) {
      runs.push([start, i - 1]);
      start = -1;
    }
  });
  if (start >= 0) runs.push([start, series.length - 1]);
  return runs;
}

/**
 * Every how many buckets a time tick is written, so that ticks `labelPx` wide keep `gapPx`
 * between them on a band `bandPx` wide.
 */
export function tickEvery(bandPx: number, labelPx: number, gapPx: number): number {
  if (!(bandPx > 0)) return 1;
  return Math.max(1, Math.ceil((labelPx + gapPx) / bandPx));
}

/** The bucket under a point `x` pixels into a plot of `count` bands `bandPx` wide; null outside it. */
export function bucketAt(x: number, bandPx: number, count: number): number | null {
  if (!(bandPx > 0) || x < 0) return null;
  const index = Math.floor(x / bandPx);
  return index < count ? index : null;
}
