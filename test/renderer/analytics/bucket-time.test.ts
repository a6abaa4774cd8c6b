import { describe, expect, it } from 'vitest';
import { bucketAxis, wallClock } from '../../../renderer/src/screens/analytics/dashboard/bucket-time.js';
import {
  cacheRows,
  dashboardRows,
  errorBoundText,
  total,
} from '../../../renderer/src/screens/analytics/dashboard/dashboard-data.js';

/** The dashboard's bucket starts read on the reporting zone's clock, whatever this computer's zone. */

const day = (text: string) =>
  new Intl.DateTimeFormat(undefined, { month: 'short', day: 'numeric', timeZone: 'UTC' }).format(Date.parse(text));

describe("bucket starts on the reporting zone's clock", () => {
  it('takes the date, time and offset from the text itself', () => {
    expect(wallClock('2026-03-29T03:00:00+02:00')).toEqual({
      fieldsMs: Date.UTC(2026, 2, 29, 3, 0, 0),
      time: '03:00',
      offset: '+02:00',
    });
    expect(wallClock('2026-01-05T23:30:00.000Z')?.offset).toBe('Z');
    expect(wallClock('2026-01-05T05:45:00+0545')?.offset).toBe('+05:45');
    expect(wallClock('2026-01-05 05:45')).toBeNull();
  });

  it('names buckets across a change of offset by their wall clock, the tooltip adding the offset', () => {
    const axis = bucketAxis(
      ['2026-03-29T00:00:00+01:00', '2026-03-29T01:00:00+01:00', '2026-03-29T03:00:00+02:00'],
      '1h',
    );
    expect([0, 1, 2].map((i) => axis.tick(i))).toEqual(['00:00', '01:00', '03:00']);
    expect(axis.title(2)).toMatch(/ 03:00 \(UTC\+02:00\)$/);
    expect(axis.title(2)).toContain(day('2026-03-29T00:00:00Z'));
  });

  it('names a day-wide bucket by its day in the zone, even where that day began on the previous UTC day', () => {
    // Midnight in Karachi is 19:00 UTC the day before: the bucket is still the 29th.
    const axis = bucketAxis(['2026-03-29T00:00:00+05:00', '2026-03-30T00:00:00+05:00'], '1d');
    expect(axis.tick(0)).toBe(day('2026-03-29T00:00:00Z'));
    expect(axis.tick(1)).toBe(day('2026-03-30T00:00:00Z'));
    expect(axis.title(0)).not.toContain('UTC');
  });

  it('adds the date to the time over a window longer than a day, and says an unreadable start as it came', () => {
    const axis = bucketAxis(['2026-03-28T00:00:00+05:00', '2026-03-29T06:00:00+05:00', 'yesterday'], '6h');
    expect(axis.tick(1)).toBe(`${day('2026-03-29T00:00:00Z')} 06:00`);
    expect(axis.tick(2)).toBe('yesterday');
  });
});

describe('the dashboard figures', () => {
  it('keeps unknown as unknown: out of totals, null in the rows', () => {
    const rows = dashboardRows([
      {
        start: '2026-03-29T00:00:00+05:00',
        requests: 0,
        ok: 0,
        client_errors: 0,
        server_errors: 0,
        refused: 0,
        cost_micro: 0,
        tokens: { prompt: null, generated: 0, cache_read: null, cache_write: null },
        tokens_per_second: null,
        latency_ms: null,
        ttft_ms: null,
      },
    ]);
    expect(rows[0]).toMatchObject({ prompt: null, cacheRead: null, latencyP50: null, tokensPerSecond: null, ok: 0 });
    expect(total(rows, 'cacheRead')).toBeNull();
    expect(total(rows, 'prompt')).toBeNull();
    expect(total(rows, 'ok')).toBe(0);
  });

  it('orders the cache by saving, unknown savings last', () => {
    const row = (model: string, saved: number | null, prompt = 10) => ({
      model,
      prompt_tokens: prompt,
      cache_read_tokens: null,
      cache_write_tokens: null,
      hit_share: null,
      saved_micro: saved,
    });
    expect(cacheRows([row('a', null), row('b', 5), row('c', null, 20), row('d', 9)]).map((r) => r.model)).toEqual([
      'd',
      'b',
      'c',
      'a',
    ]);
  });

  it('reads the percentile error bound as a percentage', () => {
    expect(errorBoundText(0.01)).toBe('1 %');
    expect(errorBoundText(0.005)).toBe('0.5 %');
  });
});
