/**
 * The value of an <input type="datetime-local"> ("2026-05-01T12:30" or with seconds) is a
 * wall-clock time in the user's zone with no offset. The server reads an offset-less ISO
 * string as UTC, so what is sent must carry the zone's offset (or be epoch seconds).
 */

const LOCAL_INPUT = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?$/;

export type ParsedLocalTime = { ok: true; date: Date } | { ok: false; error: string };

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

/** Reads a datetime-local value as an instant in the user's zone. */
export function parseLocalInput(value: string): ParsedLocalTime {
  const match = LOCAL_INPUT.exec(value.trim());
  if (!match) return { ok: false, error: 'enter a date and time, such as 2030-01-31 18:00' };
  const [y, mo, d, h, mi, s] = match.slice(1, 7).map((part) => Number(part ?? '0')) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  if (h > 23 || mi > 59 || s > 59) return { ok: false, error: 'that time does not exist' };
  const date = new Date(y, mo - 1, d, h, mi, s);
  // The Date constructor rolls impossible dates over (February 30th becomes March 2nd).
  if (Number.isNaN(date.getTime()) || date.getDate() !== d || date.getMonth() !== mo - 1) {
    return { ok: false, error: 'that date does not exist' };
  }
  // A wall-clock time the clocks skip when summer time starts is moved on by the Date
  // constructor (01:30 becomes 02:30): refuse it rather than send another time than typed.
  if (date.getHours() !== h || date.getMinutes() !== mi) {
    return { ok: false, error: 'that time does not exist in your zone: the clocks go forward then' };
  }
  return { ok: true, date };
}

/** An instant with its zone, as links between screens write one: "2030-01-31T13:05:00Z" or with an offset. */
const ZONED_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,3})?)?(?:Z|[+-]\d{2}:\d{2})$/i;

/**
 * A time route parameter: a wall-clock time in the user's zone, as a datetime-local input
 * gives it, or an exact instant with its zone, as another screen links to one (a health cell
 * opens the request log on its own five minutes, whatever the zone's clocks did then).
 */
export function parseTimeParam(value: string): ParsedLocalTime {
  const trimmed = value.trim();
  if (!ZONED_INSTANT.test(trimmed)) return parseLocalInput(trimmed);
  const [y, mo, d] = trimmed.slice(0, 10).split('-').map(Number) as [number, number, number];
  // Date.parse rolls February 30th over too: the date written must be a day of the calendar.
  const calendar = new Date(Date.UTC(y, mo - 1, d));
  const ms = Date.parse(trimmed);
  if (Number.isNaN(ms) || calendar.getUTCDate() !== d || calendar.getUTCMonth() !== mo - 1) {
    return { ok: false, error: 'that date does not exist' };
  }
  return { ok: true, date: new Date(ms) };
}

/** A time route parameter as a datetime-local value in the user's zone, to show in an input. */
export function timeParamToLocalInput(value: string): string {
  const parsed = parseTimeParam(value);
  if (!parsed.ok) return value;
  return ZONED_INSTANT.test(value.trim()) ? isoToLocalInput(parsed.date.toISOString()) : value.trim();
}

/** "+05:00" for a zone five hours east of UTC, at that instant (so summer time is right). */
export function zoneOffset(date: Date): string {
  const minutes = -date.getTimezoneOffset();
  const sign = minutes < 0 ? '-' : '+';
  const abs = Math.abs(minutes);
  return `${sign}${pad(Math.floor(abs / 60))}:${pad(abs % 60)}`;
}

/**
 * An instant as ISO 8601 in the user's zone, with its offset: "2030-01-31T18:00:00+05:00", and
 * its milliseconds when it has some (an instant another screen linked to is exact to the ms).
 */
export function toIsoWithOffset(date: Date): string {
  const ms = date.getMilliseconds();
  return (
    `${pad(date.getFullYear(), 4)}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}` +
    `T${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}` +
    `${ms === 0 ? '' : `.${pad(ms, 3)}`}${zoneOffset(date)}`
  );
}

/** Whole epoch seconds, as PATCH /keys takes an expiry. */
export function toEpochSeconds(date: Date): number {
  return Math.floor(date.getTime() / 1000);
}

/**
 * A server timestamp as a datetime-local value in the user's zone, to prefill an input;
 * seconds only when the instant has them, so a plain expiry reads "2030-01-31T18:00".
 */
export function isoToLocalInput(iso: string | null | undefined): string {
  if (!iso) return '';
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return '';
  const minutes =
    `${pad(date.getFullYear(), 4)}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}` +
    `T${pad(date.getHours())}:${pad(date.getMinutes())}`;
  return date.getSeconds() === 0 ? minutes : `${minutes}:${pad(date.getSeconds())}`;
}
