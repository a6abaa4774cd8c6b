import { formatCount } from '../../lib/format.js';

/**
 * The Reconcile screen's window: whole UTC days as the date inputs hold them (YYYY-MM-DD), the
 * days a check walks through one by one, and what a partly checked window covers. UTC because
 * the check counts UTC days; a local day would straddle two of them.
 */

const DAY_MS = 86_400_000;

export const dayText = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** A YYYY-MM-DD day's first millisecond (UTC); null for text that is no day of the calendar. */
export function parseDay(text: string): number | null {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(text)) return null;
  const ms = Date.parse(`${text}T00:00:00Z`);
  // Date.parse reads 02-30 as 03-02: a day must read back as itself.
  return Number.isFinite(ms) && dayText(ms) === text ? ms : null;
}

/**
 * Today and the days before it. Two when the screen opens: the check reads every row of its
 * window (seconds a day at ten million rows a month), so a longer one is asked for, not run unasked.
 */
export function defaultWindow(now: number, days = 2): { from: string; to: string } {
  return { from: dayText(now - (days - 1) * DAY_MS), to: dayText(now) };
}

export interface WindowErrors {
  from?: string;
  to?: string;
}

/** Why the window cannot be checked, at the field concerned; empty when it can. */
export function windowErrors(from: string, to: string, now: number): WindowErrors {
  const first = parseDay(from);
  const last = parseDay(to);
  const today = dayText(now);
  const errors: WindowErrors = {};
  if (first === null) errors.from = 'Pick the first day to check.';
  if (last === null) errors.to = 'Pick the last day to check.';
  else if (to > today) errors.to = `The last day cannot be after today (${today}, UTC): it has no rows yet.`;
  if (first !== null && last !== null && first > last) errors.from = 'The first day must not be after the last.';
  return errors;
}

/** Every day from `from` to `to`, both included; the window must be valid (windowErrors). */
export function daysOf(from: string, to: string): string[] {
  const first = parseDay(from)!;
  const count = (parseDay(to)! - first) / DAY_MS + 1;
  return Array.from({ length: count }, (_, i) => dayText(first + i * DAY_MS));
}

const span = (days: readonly string[]) => (days.length === 1 ? days[0]! : `${days[0]!} to ${days.at(-1)!}`);
const count = (n: number) => `${formatCount(n)} ${n === 1 ? 'day' : 'days'}`;
const were = (days: readonly string[]) => (days.length === 1 ? 'was' : 'were');

/**
 * Which days a report covers, the first `checked` of `days`, and which it does not: a stopped
 * or failed check must not read as one of the whole window.
 */
export function coverageText(days: readonly string[], checked: number): string {
  if (days.length === 0) return 'No day to check.';
  if (checked <= 0) return `No day was checked: ${span(days)} (${count(days.length)}) ${were(days)} not checked.`;
  if (checked >= days.length) {
    const which = days.length === 1 ? days[0]! : `every day from ${span(days)}`;
    return `The report covers ${which} (${count(days.length)}).`;
  }
  const done = days.slice(0, checked);
  const rest = days.slice(checked);
  return (
    `The report covers ${span(done)} only (${formatCount(checked)} of ${count(days.length)}); ` +
    `${span(rest)} ${were(rest)} not checked.`
  );
}
