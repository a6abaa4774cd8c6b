import { formatCount, formatDecimal, formatMs, formatTime } from './format.js';
import { UNIT_MS } from './time-range.js';
import type { Metric } from './timeseries.js';

/** How the analytics chart's values, ticks and times read. */

export const METRIC_LABELS: Record<Metric, string> = {
  volume: 'Requests',
  latency: 'Mean latency',
  ttft: 'Mean time to first token',
  tok_s: 'Tokens per second',
  token_usage: 'Tokens',
};

/** A value in the metric's unit; a combined count is a mean, so it may have a decimal. */
export function valueFormat(metric: Metric, combined: boolean): (value: number | null) => string {
  switch (metric) {
    case 'latency':
    case 'ttft':
      return formatMs;
    case 'tok_s':
      return (value) => formatDecimal(value, ' tok/s');
    default:
      return combined ? (value) => formatDecimal(value) : formatCount;
  }
}

const compact = new Intl.NumberFormat(undefined, { notation: 'compact', maximumFractionDigits: 1 });

/** Axis ticks: durations in ms or s (not "15K" ms), other figures compact. */
export function tickFormat(metric: Metric): (value: number) => string {
  if (metric === 'latency' || metric === 'ttft') {
    return (value) => (value >= 1000 ? `${compact.format(value / 1000)} s` : `${compact.format(value)} ms`);
  }
  return (value) => compact.format(value);
}

/**
 * Buckets a day wide or wider are days of UTC (the server buckets epoch-aligned), so they
 * are named by their UTC date: west of UTC the local date of 2026-01-02T00:00Z is Jan 1.
 */
export function utcDays(intervalMs: number): boolean {
  return intervalMs >= UNIT_MS.d;
}

/**
 * How times on the axis read: the UTC date alone for day-wide buckets; in the user's zone
 * otherwise, the time of day for a window within a day, date and time for a longer one;
 * seconds only for buckets narrower than a minute.
 */
export function axisTimeFormat(intervalMs: number, spanMs: number): (ms: number) => string {
  const seconds = intervalMs < UNIT_MS.m ? ({ second: '2-digit' } as const) : {};
  const options: Intl.DateTimeFormatOptions = utcDays(intervalMs)
    ? { month: 'short', day: 'numeric', timeZone: 'UTC' }
    : spanMs <= UNIT_MS.d
      ? { hour: '2-digit', minute: '2-digit', ...seconds }
      : { month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit', ...seconds };
  const format = new Intl.DateTimeFormat(undefined, options);
  return (ms) => format.format(new Date(ms));
}

const utcDay = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeZone: 'UTC' });

/** The tooltip's heading for a point: its UTC day for day-wide buckets, else its local time. */
export function pointTitle(intervalMs: number, ms: number): string {
  if (!utcDays(intervalMs)) return formatTime(new Date(ms).toISOString());
  return `${utcDay.format(new Date(ms))} (UTC day)`;
}

/** The caption's word on which clock the axis reads. */
export function axisNote(intervalMs: number): string {
  return utcDays(intervalMs)
    ? 'Dates are UTC days; the tooltip gives the exact UTC start.'
    : 'Times in your time zone; the tooltip adds UTC.';
}
