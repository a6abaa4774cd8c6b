import { badRequest } from '../http-errors.js';

const UNIT_MS = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
const DURATION = /^[1-9][0-9]*[smhd]$/;

export const DEFAULT_TIME_RANGE = '24h';
export const MAX_TIME_RANGE_MS = 400 * UNIT_MS.d;

/** Milliseconds of a `<int><unit>` duration; 400 naming the parameter when malformed. */
export function parseDuration(parameter: string, text: string): number {
  if (!DURATION.test(text)) {
    throw badRequest(`${parameter} must be a whole number followed by s, m, h or d, for example 24h`, {
      field: parameter,
    });
  }
  const ms = Number(text.slice(0, -1)) * UNIT_MS[text.slice(-1) as keyof typeof UNIT_MS];
  if (!Number.isSafeInteger(ms)) throw badRequest(`${parameter} is too long`, { field: parameter });
  return ms;
}

export function parseTimeRange(text: string | undefined): { text: string; ms: number } {
  const applied = text ?? DEFAULT_TIME_RANGE;
  const ms = parseDuration('time_range', applied);
  if (ms > MAX_TIME_RANGE_MS) throw badRequest('time_range must be at most 400d', { field: 'time_range' });
  return { text: applied, ms };
}

/**
 * Bucket widths a default interval is chosen from: round numbers a reader expects. No step
 * is more than twice the one before it (hence 3s and 3m), which is what keeps the
 * default at 60 buckets or more.
 */
const LADDER = [
  '1s',
  '2s',
  '3s',
  '5s',
  '10s',
  '15s',
  '30s',
  '1m',
  '2m',
  '3m',
  '5m',
  '10m',
  '15m',
  '30m',
  '1h',
  '2h',
  '3h',
  '4h',
  '6h',
  '8h',
  '12h',
  '1d',
  '2d',
  '3d',
  '4d',
  '5d',
  '7d',
].map((text) => ({ text, ms: parseDuration('interval', text) }));

/**
 * The narrowest round width that gives at most `buckets` (120) buckets over the window; with
 * the ladder's steps that is at least half as many for any window of a minute or more.
 */
export function defaultInterval(windowMs: number, buckets = 120): { text: string; ms: number } {
  return LADDER.find((width) => windowMs / width.ms <= buckets) ?? LADDER[LADDER.length - 1]!;
}
