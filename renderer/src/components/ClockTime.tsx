import { UNKNOWN, utcTitle } from '../lib/format.js';

// HH:MM:SS in the user's zone, on a 24-hour clock whatever the locale's habit.
const clock = new Intl.DateTimeFormat(undefined, {
  hour: '2-digit',
  minute: '2-digit',
  second: '2-digit',
  hourCycle: 'h23',
});

/** A moment of today as HH:MM:SS, e.g. when data was last read; null is unknown ("–"), never midnight. */
export function formatClock(ms: number | null): string {
  return ms === null || !Number.isFinite(ms) ? UNKNOWN : clock.format(ms);
}

/** `formatClock` as a <time> with the exact UTC instant on hover. */
export function ClockTime({ ms, testId }: { ms: number | null; testId?: string }) {
  if (ms === null || !Number.isFinite(ms)) return <span data-testid={testId}>{UNKNOWN}</span>;
  const iso = new Date(ms).toISOString();
  return (
    <time dateTime={iso} title={utcTitle(iso)} data-testid={testId}>
      {formatClock(ms)}
    </time>
  );
}
