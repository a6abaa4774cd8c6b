import { describe, expect, it } from 'vitest';
import {
  checkTimeRange,
  durationMs,
  durationText,
  isPresetRange,
  rangeFromParam,
} from '../../../renderer/src/lib/time-range.js';

/** The one set of time-range rules both the analytics screen and the request log use. */

const MIN = 60_000;
const HOUR = 3_600_000;
const DAY = 86_400_000;

describe('durations and time ranges as the server reads them', () => {
  it('reads <int><unit> and nothing else', () => {
    expect(durationMs('90s')).toBe(90_000);
    expect(durationMs('15m')).toBe(15 * MIN);
    expect(durationMs('24h')).toBe(DAY);
    expect(durationMs('400d')).toBe(400 * DAY);
    for (const bad of ['', '0h', '1.5h', '-1h', '1w', 'h', '01h', '1 h', '24H']) expect(durationMs(bad)).toBeNull();
  });

  it('accepts ranges up to 400d and says why it refuses the others, in one wording', () => {
    expect(checkTimeRange(' 45d ')).toEqual({ ok: true, text: '45d', ms: 45 * DAY });
    expect(checkTimeRange('400d')).toMatchObject({ ok: true });
    expect(checkTimeRange('401d')).toEqual({ ok: false, error: 'at most 400 days (400d)' });
    expect(checkTimeRange('9601h')).toEqual({ ok: false, error: 'at most 400 days (400d)' });
    expect(checkTimeRange('two days')).toEqual({
      ok: false,
      error: 'a whole number followed by s, m, h or d, such as 36h or 14d',
    });
    expect(checkTimeRange('')).toMatchObject({ ok: false });
  });

  it('writes widths the way they are asked for', () => {
    expect(durationText(15 * MIN)).toBe('15m');
    expect(durationText(6 * HOUR)).toBe('6h');
    expect(durationText(2 * DAY)).toBe('2d');
    expect(durationText(90_000)).toBe('90s');
    expect(durationText(1500)).toBe('1500ms');
  });
});

describe("a view's range parameter", () => {
  it('is the default when absent, the range when it parses, the default with the reason when not', () => {
    expect(rangeFromParam(undefined)).toEqual({ range: '24h', rangeMs: DAY, badRange: null });
    expect(rangeFromParam('36h')).toEqual({ range: '36h', rangeMs: 36 * HOUR, badRange: null });
    expect(rangeFromParam('2w')).toEqual({
      range: '24h',
      rangeMs: DAY,
      badRange: { text: '2w', error: expect.stringContaining('s, m, h or d') },
    });
  });

  it('knows its presets', () => {
    expect(['1h', '24h', '7d', '30d', '90d'].every(isPresetRange)).toBe(true);
    expect(isPresetRange('36h')).toBe(false);
  });
});
