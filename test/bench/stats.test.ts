import { describe, expect, it } from 'vitest';
import { percentile, timeRuns } from '../../bench/stats.js';

describe('the bench timing a query', () => {
  const limits = { warmup: 1, runs: 7, fastRuns: 21, fastMs: 1000, maxMs: 30_000 };

  it('times a fast query three times as often, so that its p95 is not its slowest run', async () => {
    let calls = 0;
    const timing = await timeRuns(async () => void calls++, limits);
    expect(timing.runs).toBe(21);
    expect(calls).toBe(22);
    expect(percentile([...Array(21).keys()], 95)).toBe(19);
  });

  it('times a query slower than the fast budget only `runs` times', async () => {
    const timing = await timeRuns(() => new Promise((resolve) => setTimeout(resolve, 200)), {
      ...limits,
      warmup: 0,
    });
    expect(timing.runs).toBe(7);
    expect(timing.min).toBeGreaterThanOrEqual(150);
  });

  it('stops a query whose runs go past the case limit after its first run', async () => {
    const timing = await timeRuns(() => new Promise((resolve) => setTimeout(resolve, 60)), {
      ...limits,
      warmup: 0,
      maxMs: 50,
    });
    expect(timing.runs).toBe(1);
  });
});
