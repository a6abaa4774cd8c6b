import { afterEach, describe, expect, it } from 'vitest';
import { axisNote, axisTimeFormat, pointTitle, valueFormat } from '../../../renderer/src/lib/chart-format.js';
import { formatTime } from '../../../renderer/src/lib/format.js';

const HOUR = 3_600_000;
const DAY = 86_400_000;
/** Midnight UTC opening 2 January 2026: still 1 January west of UTC. */
const JAN_2 = Date.UTC(2026, 0, 2);

const zone = process.env.TZ;
afterEach(() => {
  process.env.TZ = zone;
});

describe('the time axis', () => {
  it('names day-wide buckets by their UTC date, also west of UTC', () => {
    process.env.TZ = 'America/New_York';
    // The local date is the 1st: a date label in the local zone would say "Jan 1".
    expect(new Date(JAN_2).getDate()).toBe(1);
    const tick = axisTimeFormat(DAY, 30 * DAY);
    expect(tick(JAN_2)).toMatch(/Jan 2\b/);
    expect(axisTimeFormat(7 * DAY, 90 * DAY)(JAN_2)).toMatch(/Jan 2\b/);
    expect(pointTitle(DAY, JAN_2)).toMatch(/Jan 2, 2026 \(UTC day\)/);
    expect(axisNote(DAY)).toContain('UTC days');
  });

  it('reads narrower buckets in the local zone', () => {
    process.env.TZ = 'America/New_York';
    // 05:00 UTC is midnight in New York (EST, UTC-5).
    expect(axisTimeFormat(HOUR, 2 * DAY)(JAN_2 + 5 * HOUR)).toMatch(/Jan 2.*12:00\s?AM/);
    expect(axisTimeFormat(HOUR, DAY)(JAN_2 + 5 * HOUR)).toMatch(/^12:00\s?AM$/);
    expect(axisNote(HOUR)).toContain('your time zone');
    expect(pointTitle(HOUR, JAN_2)).toBe(formatTime(new Date(JAN_2).toISOString()));
  });

  it('shows seconds only for buckets under a minute', () => {
    expect(axisTimeFormat(30_000, HOUR)(JAN_2)).toMatch(/:\d\d:\d\d/);
    expect(axisTimeFormat(60_000, HOUR)(JAN_2)).not.toMatch(/:\d\d:\d\d/);
  });
});

describe('values', () => {
  it('in the metric’s unit, unknown as a dash, a combined count as a mean', () => {
    expect(valueFormat('latency', false)(1204)).toBe('1,204 ms');
    expect(valueFormat('tok_s', false)(54.27)).toBe('54.3 tok/s');
    expect(valueFormat('volume', false)(null)).toBe('–');
    expect(valueFormat('volume', true)(2.5)).toBe('2.5');
  });
});
