const ISO_8601 = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?)?$/i;

/** `Date.toISOString`'s form, when its hour is 00 to 23 (else the date checks below decide). */
const CANONICAL = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** 0000-01-01T00:00:00.000Z and 9999-12-31T23:59:59.999Z. */
const EARLIEST_MS = -62_167_219_200_000;
const LATEST_MS = 253_402_300_799_999;

/**
 * Milliseconds since the epoch for an ISO 8601 date or date-time; a value without an
 * offset is read as UTC. Null for anything malformed, including impossible dates
 * such as February 30th that `Date.parse` would roll over, and instants outside the
 * years 0000 to 9999 in UTC.
 */
export function parseIsoTimestamp(text: string): number | null {
  // The form every response and export writes, read as it is: an import parses millions.
  if (CANONICAL.test(text)) {
    const value = Date.parse(text);
    const date = new Date(value);
    if (date.getUTCDate() === Number(text.slice(8, 10)) && date.getUTCMonth() === Number(text.slice(5, 7)) - 1) {
      return value;
    }
  }
  const match = ISO_8601.exec(text.trim());
  if (!match) return null;
  const [, y, mo, d, h = '00', mi = '00', s = '00', fraction = '', zone = 'Z'] = match;
  const offset = zone.toUpperCase() === 'Z' ? 'Z' : zone.replace(/^([+-]\d{2})(\d{2})$/, '$1:$2');
  const ms = fraction ? fraction.slice(0, 4).padEnd(4, '0') : '';
  const value = Date.parse(`${y}-${mo}-${d}T${h}:${mi}:${s}${ms}${offset}`);
  // An offset can carry a year-0000 or year-9999 value outside the four-digit years that an
  // RFC 3339 timestamp (and so every response) can show.
  if (Number.isNaN(value) || value < EARLIEST_MS || value > LATEST_MS) return null;
  const calendar = new Date(Date.UTC(Number(y), Number(mo) - 1, Number(d)));
  if (calendar.getUTCDate() !== Number(d) || calendar.getUTCMonth() !== Number(mo) - 1) return null;
  return value;
}
