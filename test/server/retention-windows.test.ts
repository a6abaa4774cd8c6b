import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { complemented, grainsFor, keptSegments, segments, type Segment } from '../../server/analytics/windows.js';
import { effectiveRetentionDays, MAX_RETENTION_DAYS, retentionHorizon } from '../../server/domain/retention.js';
import {
  BOARD_GRAINS,
  CACHE_GRAINS,
  GRAINS,
  OUTCOME_GRAINS,
  type Grain,
} from '../../server/stores/telemetry/rollup-grains.js';

/**
 * How a window is read once an organisation's rows before its retention horizon are deleted
 * (windows.ts, `keptSegments`): before the horizon whole rollup cells only, from it on exactly as
 * without a horizon. And the horizon itself (domain/retention.ts): a whole hour, the shorter retention.
 */

const MINUTE = 60_000;
const HOUR = 3_600_000;
const DAY = 86_400_000;
const T = Date.parse('2026-11-04T00:00:00Z');
const at = (iso: string) => Date.parse(iso);

const byMs = new Map(GRAINS.map((grain) => [grain.ms, grain]));
const grain = (ms: number) => byMs.get(ms)!;
const part = (ms: number | null, from: string, to: string): Segment => ({
  grain: ms === null ? null : grain(ms),
  from: at(from),
  to: at(to),
});

/** The grain lists reads use: every grain, the counts', the dashboard's, the cache's, a timeseries' of 1 min, 5 min, 1 h, 1 day, none. */
const GRAIN_LISTS: readonly (readonly Grain[])[] = [
  GRAINS,
  OUTCOME_GRAINS,
  BOARD_GRAINS,
  CACHE_GRAINS,
  grainsFor(MINUTE),
  grainsFor(5 * MINUTE),
  grainsFor(HOUR),
  grainsFor(DAY),
  GRAINS.filter((g) => g.usage !== null),
  [],
];

const floorTo = (ms: number, step: number) => ms - (((ms % step) + step) % step);
const ceilTo = (ms: number, step: number) => floorTo(ms + step - 1, step);

/** Instants over six days around T, most not on any boundary; some on a minute, an hour or a day. */
const instant = fc
  .tuple(fc.integer({ min: -3 * DAY, max: 3 * DAY }), fc.constantFrom(1, MINUTE, 5 * MINUTE, HOUR, DAY))
  .map(([offset, step]) => floorTo(T + offset, step));
/** A horizon: a whole hour in the same span. */
const horizonAt = fc.integer({ min: -80, max: 80 }).map((hours) => T + hours * HOUR);
const grainList = fc.constantFrom(...GRAIN_LISTS);

describe('keptSegments', () => {
  it('is segments() itself without a horizon, or with one at or before the window', () => {
    fc.assert(
      fc.property(instant, instant, grainList, fc.integer({ min: 0, max: 10 * DAY }), (a, b, grains, back) => {
        const [from, to] = a <= b ? [a, b] : [b, a];
        expect(keptSegments(from, to, grains, undefined)).toEqual(segments(from, to, grains));
        const horizon = floorTo(from - back, HOUR);
        expect(keptSegments(from, to, grains, horizon)).toEqual(segments(from, to, grains));
      }),
      { seed: 20_261_104, numRuns: 2_000 },
    );
  });

  it('reads nothing before the horizon but whole cells, and from it on what segments() reads', () => {
    fc.assert(
      fc.property(instant, instant, grainList, horizonAt, (a, b, grains, horizon) => {
        const [from, to] = a <= b ? [a, b] : [b, a];
        const kept = keptSegments(from, to, grains, horizon);
        // In order, inside the window, not overlapping, none straddling the horizon.
        let last = from;
        for (const p of kept) {
          expect(p.from).toBeGreaterThanOrEqual(last);
          expect(p.to).toBeGreaterThan(p.from);
          expect(p.to).toBeLessThanOrEqual(to);
          expect(p.to <= horizon || p.from >= horizon).toBe(true);
          last = p.to;
        }
        const before = kept.filter((p) => p.from < horizon);
        const after = kept.filter((p) => p.from >= horizon);
        // Before it: whole cells of their grain, no rows.
        for (const p of before) {
          expect(p.grain).not.toBeNull();
          expect(p.from % p.grain!.ms).toBe(0);
          expect(p.to % p.grain!.ms).toBe(0);
        }
        // What they cover: from the first boundary of the finest grain in the window to the last
        // before the horizon (every grain divides the next coarser one), nothing when none fits.
        const finest = Math.min(...grains.map((g) => g.ms));
        const edge = Math.min(horizon, to);
        const coveredFrom = grains.length === 0 ? 0 : ceilTo(from, finest);
        const coveredTo = grains.length === 0 ? 0 : floorTo(edge, finest);
        const covered = before.reduce((sum, p) => sum + p.to - p.from, 0);
        expect(covered).toBe(Math.max(0, coveredTo - coveredFrom));
        if (covered > 0) {
          expect(before[0]!.from).toBe(coveredFrom);
          expect(before.at(-1)!.to).toBe(coveredTo);
        }
        // From it on: exactly what the window from the horizon reads.
        expect(after).toEqual(horizon < to ? segments(Math.max(from, horizon), to, grains) : []);
      }),
      { seed: 20_261_105, numRuns: 3_000 },
    );
  });

  it('puts every instant from the horizon on in exactly one segment, and none before it in a row segment', () => {
    fc.assert(
      fc.property(
        instant,
        instant,
        grainList,
        horizonAt,
        fc.array(fc.integer({ min: 0, max: 1_000_000 }), { minLength: 1, maxLength: 20 }),
        (a, b, grains, horizon, picks) => {
          const [from, to] = a <= b ? [a, b] : [b, a];
          if (from === to) return;
          const kept = keptSegments(from, to, grains, horizon);
          for (const pick of picks) {
            const ts = from + (pick % (to - from));
            const holding = kept.filter((p) => p.from <= ts && ts < p.to);
            if (ts >= horizon) expect(holding).toHaveLength(1);
            else {
              expect(holding.length).toBeLessThanOrEqual(1);
              if (holding[0]) expect(holding[0].grain).not.toBeNull();
            }
          }
        },
      ),
      { seed: 20_261_106, numRuns: 2_000 },
    );
  });

  it('reads a run of rows as a cell less the rows outside it only where fewer, kept and whole: each instant still once', () => {
    // Fine cells kept from a day's start, as fine-cells.ts keeps them.
    const fineFromAt = fc.integer({ min: -4, max: 4 }).map((days) => T + days * DAY);
    // Days alone too: a run of rows as long as a day, whose day cell would reach before the horizon.
    const lists = fc.constantFrom(...GRAIN_LISTS, [grain(DAY)]);
    fc.assert(
      fc.property(instant, instant, lists, horizonAt, fineFromAt, (a, b, grains, horizon, fineFrom) => {
        const [from, to] = a <= b ? [a, b] : [b, a];
        const parts = keptSegments(from, to, grains, horizon, fineFrom);
        const read = complemented(parts, grains, { horizon, fineFrom });
        expect(read).toHaveLength(parts.length);
        for (const [i, part] of read.entries()) {
          const rows = parts[i]!;
          if (part === rows) continue;
          // Only a run of rows becomes a whole cell of a grain read here, where its cells are kept.
          expect(rows.grain).toBeNull();
          expect(grains).toContain(part.grain);
          const ms = part.grain!.ms;
          expect([part.from % ms, part.to - part.from]).toEqual([0, ms]);
          expect(part.from).toBeGreaterThanOrEqual(horizon);
          if (ms < HOUR) expect(part.from).toBeGreaterThanOrEqual(fineFrom);
          // Less exactly the rows of the cell outside the run, and fewer of them.
          const outside = part.less!.reduce((sum, span) => sum + span.to - span.from, 0);
          expect(outside).toBeLessThan(rows.to - rows.from);
          expect(part.less).toEqual(
            [
              { from: part.from, to: rows.from },
              { from: rows.to, to: part.to },
            ].filter((span) => span.from < span.to),
          );
        }
        // Every instant counted as often as before: once in the window from the horizon on.
        const count = (segmentsRead: readonly Segment[], ts: number) =>
          segmentsRead.filter((p) => p.from <= ts && ts < p.to).length -
          segmentsRead.flatMap((p) => p.less ?? []).filter((span) => span.from <= ts && ts < span.to).length;
        const edges = read.flatMap((p) => [p.from, p.to, ...(p.less ?? []).flatMap((span) => [span.from, span.to])]);
        for (const ts of [...edges, ...edges.map((edge) => edge - 1), from, to - 1]) {
          expect(count(read, ts), `at ${ts}`).toBe(count(parts, ts));
        }
      }),
      { seed: 20_261_205, numRuns: 3_000 },
    );
  });

  it('keeps only the whole cells of a window wholly before the horizon', () => {
    const horizon = at('2026-11-05T09:00:00Z');
    // 1-minute charts: whole minutes only, the partial ones at both ends dropped.
    expect(
      keptSegments(at('2026-11-04T07:58:30.500Z'), at('2026-11-04T08:03:10Z'), grainsFor(MINUTE), horizon),
    ).toEqual([part(MINUTE, '2026-11-04T07:59:00Z', '2026-11-04T08:03:00Z')]);
    // Every grain: the coarsest that fits in the middle, finer ones toward the edges.
    expect(keptSegments(at('2026-11-03T22:58:30.500Z'), at('2026-11-05T01:07:10Z'), GRAINS, horizon)).toEqual([
      part(MINUTE, '2026-11-03T22:59:00Z', '2026-11-03T23:00:00Z'),
      part(HOUR, '2026-11-03T23:00:00Z', '2026-11-04T00:00:00Z'),
      part(DAY, '2026-11-04T00:00:00Z', '2026-11-05T00:00:00Z'),
      part(HOUR, '2026-11-05T00:00:00Z', '2026-11-05T01:00:00Z'),
      part(5 * MINUTE, '2026-11-05T01:00:00Z', '2026-11-05T01:05:00Z'),
      part(MINUTE, '2026-11-05T01:05:00Z', '2026-11-05T01:07:00Z'),
    ]);
    // Counts (days and hours): a window inside one hour keeps nothing at all.
    expect(keptSegments(at('2026-11-04T07:01:00Z'), at('2026-11-04T07:59:00Z'), OUTCOME_GRAINS, horizon)).toEqual([]);
    // Rows only (a scope naming a target): nothing before the horizon.
    expect(keptSegments(at('2026-11-04T07:01:00Z'), at('2026-11-04T08:00:00Z'), [], horizon)).toEqual([]);
  });

  it('reads a window across the horizon as whole cells before it and as usual after it', () => {
    const horizon = at('2026-11-04T09:00:00Z');
    // A 1-minute chart: the partial minute before the horizon is dropped, the one at the end read from rows.
    expect(
      keptSegments(at('2026-11-04T07:58:30.500Z'), at('2026-11-04T10:02:10Z'), grainsFor(MINUTE), horizon),
    ).toEqual([
      part(MINUTE, '2026-11-04T07:59:00Z', '2026-11-04T09:00:00Z'),
      part(MINUTE, '2026-11-04T09:00:00Z', '2026-11-04T10:02:00Z'),
      part(null, '2026-11-04T10:02:00Z', '2026-11-04T10:02:10Z'),
    ]);
    // A 1-day chart: the day holding the horizon is never one cell, since half of it is before it.
    expect(keptSegments(at('2026-11-02T13:00:00.250Z'), at('2026-11-05T05:30:00Z'), grainsFor(DAY), horizon)).toEqual([
      part(MINUTE, '2026-11-02T13:01:00Z', '2026-11-02T13:05:00Z'),
      part(5 * MINUTE, '2026-11-02T13:05:00Z', '2026-11-02T14:00:00Z'),
      part(HOUR, '2026-11-02T14:00:00Z', '2026-11-03T00:00:00Z'),
      part(DAY, '2026-11-03T00:00:00Z', '2026-11-04T00:00:00Z'),
      part(HOUR, '2026-11-04T00:00:00Z', '2026-11-04T09:00:00Z'),
      // After it as without a horizon: from the horizon, hours up to the day's last whole one.
      part(HOUR, '2026-11-04T09:00:00Z', '2026-11-05T05:00:00Z'),
      part(5 * MINUTE, '2026-11-05T05:00:00Z', '2026-11-05T05:30:00Z'),
    ]);
    // Rows only: the window starts at the horizon.
    expect(keptSegments(at('2026-11-04T07:01:00Z'), at('2026-11-04T10:00:00Z'), [], horizon)).toEqual([
      part(null, '2026-11-04T09:00:00Z', '2026-11-04T10:00:00Z'),
    ]);
    // A horizon at the window's start or before it changes nothing; an empty window stays empty.
    const from = at('2026-11-04T09:00:00Z');
    const to = at('2026-11-04T11:30:30Z');
    expect(keptSegments(from, to, GRAINS, horizon)).toEqual(segments(from, to, GRAINS));
    expect(keptSegments(from, from, GRAINS, horizon + HOUR)).toEqual([]);
  });
});

describe('the retention horizon', () => {
  it('is the start of the hour `days` days before now, rows before it deleted', () => {
    const now = at('2026-11-06T09:41:17.250Z');
    expect(retentionHorizon(2, now)).toBe(at('2026-11-04T09:00:00Z'));
    expect(retentionHorizon(1, at('2026-11-06T09:00:00Z'))).toBe(at('2026-11-05T09:00:00Z'));
    expect(retentionHorizon(1, at('2026-11-06T08:59:59.999Z'))).toBe(at('2026-11-05T08:00:00Z'));
    expect(retentionHorizon(null, now)).toBeNull();
    // Before 1970 too (a clock or a test far in the past): still the start of an hour.
    expect(retentionHorizon(1, -1)).toBe(-DAY - HOUR);
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: MAX_RETENTION_DAYS }),
        fc.integer({ min: 0, max: 4_102_444_800_000 }),
        (days, t) => {
          const horizon = retentionHorizon(days, t)!;
          expect(floorTo(horizon, HOUR)).toBe(horizon);
          expect(horizon).toBeLessThanOrEqual(t - days * DAY);
          expect(horizon).toBeGreaterThan(t - days * DAY - HOUR);
        },
      ),
      { seed: 2026, numRuns: 1_000 },
    );
  });

  it('takes the shorter of the platform’s and the organisation’s retention', () => {
    expect(effectiveRetentionDays(null, null)).toBeNull();
    expect(effectiveRetentionDays(30, null)).toBe(30);
    expect(effectiveRetentionDays(null, 7)).toBe(7);
    expect(effectiveRetentionDays(30, 7)).toBe(7);
    expect(effectiveRetentionDays(7, 30)).toBe(7);
  });
});
