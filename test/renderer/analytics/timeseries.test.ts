import { describe, expect, it } from 'vitest';
import {
  MAX_BUCKETS,
  MAX_CELLS,
  alignDown,
  bucketCount,
  bucketMs,
  chartRows,
  downsample,
  emptyBucketValue,
  fillGaps,
  type RawPoint,
  type SeriesTable,
} from '../../../renderer/src/lib/timeseries.js';

const MIN = 60_000;
const HOUR = 3_600_000;
const DAY = 86_400_000;
/** 2026-11-22T07:00:00Z */
const T0 = Date.UTC(2026, 10, 22, 7);
const iso = (ms: number) => new Date(ms).toISOString().slice(0, 19);

describe('buckets as the server writes them', () => {
  it('reads buckets as UTC whatever the zone, and aligns to the epoch like the server', () => {
    expect(bucketMs('2026-11-22T07:00:00')).toBe(T0);
    expect(bucketMs('2026-11-22T07:00:00Z')).toBe(T0);
    expect(bucketMs('2026-11-22T09:00:00+02:00')).toBe(T0);
    expect(bucketMs('not a time')).toBeNull();
    expect(alignDown(T0 + 17 * MIN, 15 * MIN)).toBe(T0 + 15 * MIN);
    expect(alignDown(T0 + 5 * HOUR, DAY)).toBe(Date.UTC(2026, 10, 22));
  });

  it('counts the buckets a window can touch, to refuse intervals far too fine', () => {
    expect(bucketCount(DAY, HOUR)).toBe(26);
    expect(bucketCount(400 * DAY, MIN)).toBeGreaterThan(MAX_BUCKETS);
    expect(bucketCount(30 * DAY, MIN)).toBeLessThanOrEqual(MAX_BUCKETS);
  });
});

describe('filling the buckets the server left out', () => {
  it('a missing bucket is a known 0 for counts and sums, unknown for means', () => {
    expect(emptyBucketValue('volume')).toBe(0);
    expect(emptyBucketValue('token_usage')).toBe(0);
    expect(emptyBucketValue('latency')).toBeNull();
    expect(emptyBucketValue('ttft')).toBeNull();
    expect(emptyBucketValue('tok_s')).toBeNull();
  });

  const points: RawPoint[] = [
    { bucket: iso(T0), group: null, value: 5 },
    { bucket: iso(T0 + 3 * HOUR), group: null, value: 2 },
  ];
  const window = { intervalMs: HOUR, fromMs: T0, toMs: T0 + 4 * HOUR, grouped: false };

  it('volume: every bucket of the window, zeros in the gaps', () => {
    const table = fillGaps(points, { ...window, metric: 'volume' });
    expect(table.times).toEqual([0, 1, 2, 3, 4].map((i) => T0 + i * HOUR));
    expect(table.stepMs).toBe(HOUR);
    expect(table.series).toEqual([{ group: null, values: [5, 0, 0, 2, 0] }]);
  });

  it('latency: the gaps are null, so the line breaks there instead of dropping to 0', () => {
    const table = fillGaps(points, { ...window, metric: 'latency' });
    expect(table.series[0]!.values).toEqual([5, null, null, 2, null]);
  });

  it('an interval that does not divide the window: the first bucket starts before it, the last holds now', () => {
    // 7h window ending at 07:20, 3h buckets: 00:20 falls in the 00:00 bucket, 07:20 in 06:00.
    const to = T0 + 20 * MIN;
    const from = to - 7 * HOUR;
    const table = fillGaps([{ bucket: iso(T0 - 4 * HOUR), group: null, value: 1 }], {
      metric: 'volume',
      intervalMs: 3 * HOUR,
      fromMs: from,
      toMs: to,
      grouped: false,
    });
    expect(table.times.map(iso)).toEqual(['2026-11-22T00:00:00', '2026-11-22T03:00:00', '2026-11-22T06:00:00']);
    expect(table.series[0]!.values).toEqual([0, 1, 0]);
  });

  it('an interval not a divisor of a day (7m) still aligns to the epoch, like the server', () => {
    const step = 7 * MIN;
    const to = T0;
    const table = fillGaps([], { metric: 'volume', intervalMs: step, fromMs: to - HOUR, toMs: to, grouped: false });
    for (const t of table.times) expect(t % step).toBe(0);
    expect(table.times[0]).toBeLessThanOrEqual(to - HOUR);
    expect(table.times[table.times.length - 1]! + step).toBeGreaterThan(to);
    expect(table.times.length).toBe(Math.floor(to / step) - Math.floor((to - HOUR) / step) + 1);
  });

  it('a bucket the server saw outside the window this clock computed widens it, it is not dropped', () => {
    const table = fillGaps([{ bucket: iso(T0 + 5 * HOUR), group: null, value: 9 }], { ...window, metric: 'volume' });
    expect(table.times).toHaveLength(6);
    expect(table.series[0]!.values[5]).toBe(9);
  });

  it('grouped: one series per group, each filled on its own, the group without an id last', () => {
    const grouped: RawPoint[] = [
      { bucket: iso(T0), group: 'b', value: 1 },
      { bucket: iso(T0), group: null, value: 4 },
      { bucket: iso(T0 + HOUR), group: 'a', value: 2 },
      { bucket: iso(T0 + 2 * HOUR), group: 'b', value: 3 },
    ];
    const volume = fillGaps(grouped, { ...window, toMs: T0 + 2 * HOUR, metric: 'volume', grouped: true });
    expect(volume.series).toEqual([
      { group: 'a', values: [0, 2, 0] },
      { group: 'b', values: [1, 0, 3] },
      { group: null, values: [4, 0, 0] },
    ]);
    const ttft = fillGaps(grouped, { ...window, toMs: T0 + 2 * HOUR, metric: 'ttft', grouped: true });
    expect(ttft.series.map((s) => s.values)).toEqual([
      [null, 2, null],
      [1, null, 3],
      [4, null, null],
    ]);
  });

  it('an empty window: one flat series ungrouped (zeros or unknowns), none when grouped', () => {
    expect(fillGaps([], { ...window, metric: 'volume' }).series).toEqual([{ group: null, values: [0, 0, 0, 0, 0] }]);
    expect(fillGaps([], { ...window, metric: 'tok_s' }).series[0]!.values.every((v) => v === null)).toBe(true);
    expect(fillGaps([], { ...window, metric: 'volume', grouped: true }).series).toEqual([]);
  });

  it('skips rows it cannot read rather than drawing them at the epoch', () => {
    const table = fillGaps([{ bucket: 'garbage', group: null, value: 3 }, ...points], { ...window, metric: 'volume' });
    expect(table.times[0]).toBe(T0);
    expect(table.series[0]!.values).toEqual([5, 0, 0, 2, 0]);
  });

  it('refuses to fill more buckets than it can hold', () => {
    expect(() =>
      fillGaps([], { metric: 'volume', intervalMs: 1000, fromMs: 0, toMs: 400 * DAY, grouped: false }),
    ).toThrow(/buckets/);
    expect(() => fillGaps([], { ...window, metric: 'volume', intervalMs: 0 })).toThrow();
  });

  it('counts what it would hold as buckets times series, not buckets alone', () => {
    // 200,001 one-minute buckets: one series fits, ten do not.
    const wide = { metric: 'volume' as const, intervalMs: MIN, fromMs: T0, toMs: T0 + 200_000 * MIN };
    const groups = (n: number) => Array.from({ length: n }, (_, i) => ({ bucket: iso(T0), group: `g${i}`, value: 1 }));
    expect(fillGaps(groups(1), { ...wide, grouped: true }).series).toHaveLength(1);
    expect(fillGaps(groups(4), { ...wide, grouped: true }).series).toHaveLength(4);
    expect(200_001 * 5).toBeGreaterThan(MAX_CELLS);
    expect(() => fillGaps(groups(5), { ...wide, grouped: true })).toThrow(
      /200,?001 buckets × 5 series are more values than the chart can hold/,
    );
  });
});

describe('never more points than pixels', () => {
  const table = (values: (number | null)[][], step = MIN): SeriesTable => ({
    times: values[0]!.map((_, i) => T0 + i * step),
    stepMs: step,
    series: values.map((v, i) => ({ group: `g${i}`, values: v })),
  });

  it('leaves a table that fits as it is', () => {
    const small = table([[1, 2, 3]]);
    expect(downsample(small, 3)).toEqual({ ...small, perPoint: 1, buckets: 3 });
    expect(downsample(small, 500).perPoint).toBe(1);
  });

  it('combines runs of buckets into the mean of their known values; a run of unknowns stays unknown', () => {
    const out = downsample(
      table([
        [1, 3, null, null, 4, null, 8],
        [0, 0, 6, 0, 0, 0, 3],
      ]),
      3,
    );
    expect(out.perPoint).toBe(3);
    expect(out.times).toEqual([T0, T0 + 3 * MIN, T0 + 6 * MIN]);
    expect(out.stepMs).toBe(3 * MIN);
    expect(out.series[0]!.values).toEqual([2, 4, 8]);
    expect(out.series[1]!.values).toEqual([2, 0, 3]);
    expect(out.buckets).toBe(7);
    const unknown = downsample(table([[null, null, null, null, 5, 5]]), 3);
    expect(unknown.series[0]!.values).toEqual([null, null, 5]);
  });

  it('keeps each series and its group, in order', () => {
    const out = downsample(
      table([
        [1, 1, 1, 1],
        [2, 2, 2, 2],
      ]),
      2,
    );
    expect(out.series.map((s) => s.group)).toEqual(['g0', 'g1']);
    expect(out.series.map((s) => s.values)).toEqual([
      [1, 1],
      [2, 2],
    ]);
  });

  it('picks the narrowest run that fits, and never more points than pixels, for any size', () => {
    for (const n of [2, 7, 100, 999, 1000, 1001, 43_200]) {
      const big = table([Array.from({ length: n }, (_, i) => i)]);
      for (const pixels of [1, 2, 3, 50, 333, 640, 1000, 1920]) {
        const out = downsample(big, pixels);
        expect(out.times.length).toBeLessThanOrEqual(pixels);
        expect(out.series[0]!.values).toHaveLength(out.times.length);
        expect(out.times.length).toBe(Math.ceil(n / out.perPoint));
        if (n <= pixels) expect(out.perPoint).toBe(1);
        // One bucket fewer per point would not fit: the run is the narrowest that does.
        else expect(Math.ceil(n / (out.perPoint - 1))).toBeGreaterThan(pixels);
      }
    }
  });

  it('draws at least one point however narrow the chart (0 or fractional widths)', () => {
    const out = downsample(table([[1, 2, 3, 4]]), 0);
    expect(out.times).toEqual([T0]);
    expect(out.series[0]!.values).toEqual([2.5]);
    expect(downsample(table([[1, 2, 3, 4]]), 2.9).times).toHaveLength(2);
    expect(downsample(table([[1, 2, 3, 4]]), Number.NaN).times).toHaveLength(1);
  });

  it('grouped and filled, then downsampled: every series fits the pixels', () => {
    const points: RawPoint[] = [];
    for (let i = 0; i < 2000; i += 7) points.push({ bucket: iso(T0 + i * MIN), group: `k${i % 3}`, value: i });
    const filled = fillGaps(points, {
      metric: 'latency',
      intervalMs: MIN,
      fromMs: T0,
      toMs: T0 + 2000 * MIN,
      grouped: true,
    });
    expect(filled.series).toHaveLength(3);
    const out = downsample(filled, 300);
    expect(out.times.length).toBeLessThanOrEqual(300);
    for (const s of out.series) expect(s.values).toHaveLength(out.times.length);
  });
});

describe('rows for the chart', () => {
  it('turns a table into {t, s0, s1} rows, null kept as null', () => {
    expect(
      chartRows({
        times: [T0, T0 + MIN],
        stepMs: MIN,
        series: [
          { group: 'a', values: [1, null] },
          { group: 'b', values: [null, 2] },
        ],
      }),
    ).toEqual([
      { t: T0, s0: 1, s1: null },
      { t: T0 + MIN, s0: null, s1: 2 },
    ]);
  });
});
