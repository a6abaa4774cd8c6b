import { UNIT_MS, durationMs } from '../../../lib/time-range.js';

/**
 * How the dashboard's bucket starts read. The server gives each start in the organisation's
 * reporting zone with that zone's offset at that instant ("2026-03-29T03:00:00+02:00"), and
 * the panels show that zone's wall clock: the date and time are taken from the text itself,
 * never turned into an instant and formatted again in this computer's zone (which may differ
 * from the reporting zone, and whose daylight saving would shift or repeat hours).
 */

const START = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?(Z|[+-]\d{2}:?\d{2})$/i;

export interface WallClock {
  /**
   * The wall-clock date and time read as if they were UTC: only for formatting with
   * `timeZone: 'UTC'` (month names in the user's language) and for spans between starts.
   */
  fieldsMs: number;
  /** "14:30", as the text has it. */
  time: string;
  /** The zone's offset at that instant: "+05:00"; "Z" for UTC. */
  offset: string;
}

/** The wall clock of a bucket start, or null when the text is not a date-time with an offset. */
export function wallClock(start: string): WallClock | null {
  const match = START.exec(start.trim());
  if (!match) return null;
  const [, year, month, day, hour, minute, second, offset] = match;
  const fieldsMs = Date.UTC(
    Number(year),
    Number(month) - 1,
    Number(day),
    Number(hour),
    Number(minute),
    Number(second ?? 0),
  );
  if (Number.isNaN(fieldsMs)) return null;
  const zone = offset!.toUpperCase() === 'Z' ? 'Z' : offset!.replace(/^([+-]\d{2})(\d{2})$/, '$1:$2');
  return { fieldsMs, time: `${hour}:${minute}`, offset: zone };
}

/** "UTC+05:00", "UTC" for an offset of zero. */
export function offsetText(offset: string): string {
  return offset === 'Z' || offset === '+00:00' || offset === '-00:00' ? 'UTC' : `UTC${offset}`;
}

// Formatted in UTC because the fields already are the zone's wall clock (see `fieldsMs`).
const shortDay = new Intl.DateTimeFormat(undefined, { month: 'short', day: 'numeric', timeZone: 'UTC' });
const longDay = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeZone: 'UTC' });

/** How the panels' shared time axis and their tooltips name a bucket, by its index in the answer. */
export interface BucketAxis {
  /** A tick of the axis: "14:00" within a day, "Mar 29" for day-wide buckets, "Mar 29 14:00" otherwise. */
  tick(index: number): string;
  /** A tooltip's heading: the bucket's date and time with the zone's offset then ("Mar 29, 2026 03:00 (UTC+02:00)"). */
  title(index: number): string;
}

export function bucketAxis(starts: readonly string[], interval: string): BucketAxis {
  const clocks = starts.map(wallClock);
  const dayWide = (durationMs(interval) ?? 0) >= UNIT_MS.d;
  const known = clocks.filter((clock) => clock !== null);
  const withinDay = (known[known.length - 1]?.fieldsMs ?? 0) - (known[0]?.fieldsMs ?? 0) <= UNIT_MS.d;

  return {
    tick(index) {
      const clock = clocks[index];
      if (!clock) return starts[index] ?? '';
      if (dayWide) return shortDay.format(clock.fieldsMs);
      return withinDay ? clock.time : `${shortDay.format(clock.fieldsMs)} ${clock.time}`;
    },
    title(index) {
      const clock = clocks[index];
      if (!clock) return starts[index] ?? '';
      const day = longDay.format(clock.fieldsMs);
      if (dayWide) return interval === '1d' ? day : `${interval} from ${day}`;
      return `${day} ${clock.time} (${offsetText(clock.offset)})`;
    },
  };
}
