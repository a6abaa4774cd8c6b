/** Median, p95 and the rest of a set of timings, in milliseconds. */
export interface Timing {
  runs: number;
  p50: number;
  p95: number;
  min: number;
  max: number;
  mean: number;
}

/** Nearest-rank percentile of sorted values: with few runs p95 is the slowest run. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1]!;
}

export function summarise(samples: readonly number[]): Timing {
  const sorted = [...samples].sort((a, b) => a - b);
  const sum = sorted.reduce((total, value) => total + value, 0);
  return {
    runs: sorted.length,
    p50: round(percentile(sorted, 50)),
    p95: round(percentile(sorted, 95)),
    min: round(sorted[0] ?? NaN),
    max: round(sorted[sorted.length - 1] ?? NaN),
    mean: round(sum / sorted.length),
  };
}

export function round(value: number, digits = 2): number {
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
}

export interface LoopLimits {
  warmup: number;
  runs: number;
  /** Stops early, after at least one timed run, once this much time has gone. */
  maxMs: number;
}

/**
 * Times `task`: warm-up runs first, then up to `runs` timed runs. Every loop has a count
 * and the whole case a time limit, so a slow query cannot hold the benchmark for long.
 */
export async function timeRuns(task: () => Promise<unknown>, limits: LoopLimits): Promise<Timing> {
  const started = performance.now();
  const elapsed = () => performance.now() - started;
  for (let i = 0; i < limits.warmup && elapsed() < limits.maxMs / 2; i++) await task();
  const samples: number[] = [];
  for (let i = 0; i < limits.runs; i++) {
    const t0 = performance.now();
    await task();
    samples.push(performance.now() - t0);
    if (elapsed() >= limits.maxMs) break;
  }
  return summarise(samples);
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
