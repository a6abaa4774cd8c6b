/**
 * How figures read on screen. Null is unknown and always shows as a dash, never as 0;
 * times show in the user's zone, with the UTC instant offered as a tooltip.
 */

export const UNKNOWN = '–';

const integer = new Intl.NumberFormat(undefined, { maximumFractionDigits: 0 });
const decimal = new Intl.NumberFormat(undefined, { maximumFractionDigits: 1 });

export function formatCount(value: number | null | undefined): string {
  return value === null || value === undefined ? UNKNOWN : integer.format(value);
}

export function formatDecimal(value: number | null | undefined, unit = ''): string {
  return value === null || value === undefined ? UNKNOWN : `${decimal.format(value)}${unit}`;
}

const compact = new Intl.NumberFormat(undefined, { notation: 'compact', maximumFractionDigits: 1 });

/** A count that may be huge, in at most about eight characters: exact below a million, "12.3M" above. */
export function formatBoundedCount(value: number | null | undefined): string {
  if (value === null || value === undefined) return UNKNOWN;
  return Math.abs(value) < 1_000_000 ? integer.format(value) : compact.format(value);
}

/**
 * A duration in the unit that keeps it short: "9,999 ms", "599.9 s", "99.9 min", "99.9 h", then
 * days. Imported rows may hold any figure, and a table column must read whole at any of them.
 */
export function formatMs(value: number | null | undefined): string {
  if (value === null || value === undefined) return UNKNOWN;
  if (Math.round(value) < 10_000) return `${integer.format(value)} ms`;
  const seconds = value / 1000;
  // Each unit while its figure needs at most four digits (after rounding).
  if (seconds < 599.95) return `${decimal.format(seconds)} s`;
  if (seconds / 60 < 99.95) return `${decimal.format(seconds / 60)} min`;
  if (seconds / 3600 < 99.95) return `${decimal.format(seconds / 3600)} h`;
  const days = seconds / 86_400;
  if (days < 99.95) return `${decimal.format(days)} d`;
  return `${days < 9_999.5 ? integer.format(days) : compact.format(days)} d`;
}

const localTime = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'medium' });
const localMinute = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });
const localDate = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium' });

function parse(iso: string): Date | null {
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? null : date;
}

/** A timestamp in the user's zone; `whenNull` is what an absent one means here ("never", "no expiry"). */
export function formatTime(iso: string | null | undefined, whenNull: string = UNKNOWN): string {
  if (iso === null || iso === undefined) return whenNull;
  const date = parse(iso);
  return date ? localTime.format(date) : iso;
}

/** To the minute, where a table has no room for seconds (the full time then goes in a tooltip). */
export function formatMinute(iso: string | null | undefined, whenNull: string = UNKNOWN): string {
  if (iso === null || iso === undefined) return whenNull;
  const date = parse(iso);
  return date ? localMinute.format(date) : iso;
}

export function formatDate(iso: string | null | undefined, whenNull: string = UNKNOWN): string {
  if (iso === null || iso === undefined) return whenNull;
  const date = parse(iso);
  return date ? localDate.format(date) : iso;
}

/** The exact instant in UTC, for a tooltip beside a local time. */
export function utcTitle(iso: string | null | undefined): string | undefined {
  if (!iso) return undefined;
  const date = parse(iso);
  return date
    ? `${date
        .toISOString()
        .replace('T', ' ')
        .replace(/\.\d+Z$/, 'Z')
        .replace('Z', ' UTC')}`
    : undefined;
}
