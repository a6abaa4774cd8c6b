/**
 * An instant as ISO 8601 in an IANA time zone, with that zone's offset at the instant:
 * 2026-11-26T17:00:00+05:00. The organisation's reporting zone, not the computer's, so that a
 * file reads the same wherever it was exported. Null for an instant or zone that does not read.
 */
const formats = new Map<string, Intl.DateTimeFormat>();

function formatOf(zone: string): Intl.DateTimeFormat {
  let format = formats.get(zone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
      timeZoneName: 'longOffset',
    });
    formats.set(zone, format);
  }
  return format;
}

export function zonedIso(zone: string, ms: number): string | null {
  if (!Number.isFinite(ms)) return null;
  let parts: Intl.DateTimeFormatPart[];
  try {
    parts = formatOf(zone).formatToParts(ms);
  } catch {
    return null;
  }
  const part = (type: Intl.DateTimeFormatPartTypes) => parts.find((p) => p.type === type)?.value ?? '';
  // "GMT+05:45", or "GMT" alone at a zero offset.
  const offset = part('timeZoneName').replace('GMT', '') || '+00:00';
  return `${part('year')}-${part('month')}-${part('day')}T${part('hour')}:${part('minute')}:${part('second')}${offset}`;
}
