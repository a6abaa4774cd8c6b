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
  /**
   * Timed runs go on to this many while they have taken under `fastMs` in all: a p95 of 7 runs
   * is their slowest, so one stall of the machine decides it; of 21, their second slowest.
   */
  fastRuns: number;
  fastMs: number;
  /** Stops early, after at least one timed run, once this much time has gone. */
  maxMs: number;
}

/**
 * Times `task`: warm-up runs first, then `runs` timed runs, or up to `fastRuns` while they take
 * under `fastMs`. Every loop has a count and the whole case a time limit, so a slow query
 * cannot hold the benchmark for long.
 */
export async function timeRuns(task: () => Promise<unknown>, limits: LoopLimits): Promise<Timing> {
  const started = performance.now();
  const elapsed = () => performance.now() - started;
  for (let i = 0; i < limits.warmup && elapsed() < limits.maxMs / 2; i++) await task();
  const samples: number[] = [];
  let timedMs = 0;
  for (let i = 0; i < Math.max(limits.runs, limits.fastRuns); i++) {
    if (i >= limits.runs && timedMs >= limits.fastMs) break;
    const t0 = performance.now();
    await task();
    const ms = performance.now() - t0;
    samples.push(ms);
    timedMs += ms;
    if (elapsed() >= limits.maxMs) break;
  }
  return summarise(samples);
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
