/**
 * An organisation's reporting time zone: whose days, weeks and hours the dashboard's time series
 * are bucketed in (a Karachi admin's day starts at 19:00 UTC). Pure functions over the runtime's
 * ICU time zone data (`Intl`), no dependency: Node's full ICU knows every IANA zone.
 *
 * Offsets here are milliseconds east of UTC. Real offsets are whole minutes (multiples of 15
 * since the 1970s); local mean time before ~1900 is not a concern of reporting.
 */

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/** The zone a stored name reads as: UTC when this runtime no longer knows it (a store moved to an older ICU). */
export function readableZone(stored: string): string {
  return canonicalZone(stored) ?? 'UTC';
}

/** The most buckets one call returns: a guard against a window far too long for its interval. */
export const MAX_BUCKETS = 100_000;

/** 1970-01-05, a Monday, is local day 4. */
const MONDAY_PHASE = 4;

/** Longest a zone name may be (the longest IANA name, America/Argentina/ComodRivadavia, has 32). */
const ZONE_NAME_MAX = 64;

/**
 * Names ICU still reports for zones that IANA has renamed since (ICU keeps CLDR's old canonical
 * ids, so Node 20 resolves 'Asia/Kolkata' to 'Asia/Calcutta'): the current name is the one to store
 * and show. Only renames of one zone; the per-country names that IANA now links to a neighbour's
 * zone (Europe/Bratislava) are names in their own right and stay.
 */
const RENAMED: Readonly<Record<string, string>> = {
  'Africa/Asmera': 'Africa/Asmara',
  'America/Buenos_Aires': 'America/Argentina/Buenos_Aires',
  'America/Catamarca': 'America/Argentina/Catamarca',
  'America/Coral_Harbour': 'America/Atikokan',
  'America/Cordoba': 'America/Argentina/Cordoba',
  'America/Godthab': 'America/Nuuk',
  'America/Indianapolis': 'America/Indiana/Indianapolis',
  'America/Jujuy': 'America/Argentina/Jujuy',
  'America/Louisville': 'America/Kentucky/Louisville',
  'America/Mendoza': 'America/Argentina/Mendoza',
  'Asia/Calcutta': 'Asia/Kolkata',
  'Asia/Katmandu': 'Asia/Kathmandu',
  'Asia/Rangoon': 'Asia/Yangon',
  'Asia/Saigon': 'Asia/Ho_Chi_Minh',
  'Atlantic/Faeroe': 'Atlantic/Faroe',
  'Europe/Kiev': 'Europe/Kyiv',
  'Pacific/Enderbury': 'Pacific/Kanton',
  'Pacific/Ponape': 'Pacific/Pohnpei',
  'Pacific/Truk': 'Pacific/Chuuk',
};

/**
 * A zone name: letters first, then letters, digits and _ + - /. Keeps out the offset forms that
 * newer runtimes accept as a `timeZone` ('+05:00'): a reporting zone is a place, whose offset
 * follows its daylight saving.
 */
const ZONE_NAME = /^[A-Za-z][A-Za-z0-9_+\-/]*$/;

const canonical = new Map<string, string | null>();

/** The canonical IANA name of `name` (e.g. 'asia/karachi' → 'Asia/Karachi', 'UTC'), or null when this runtime knows no such zone. */
export function canonicalZone(name: string): string | null {
  if (typeof name !== 'string' || name.length > ZONE_NAME_MAX || !ZONE_NAME.test(name)) return null;
  const key = name.toLowerCase();
  const known = canonical.get(key);
  if (known !== undefined) return known;
  let resolved: string | null;
  try {
    const id = new Intl.DateTimeFormat('en-US', { timeZone: name }).resolvedOptions().timeZone;
    // Every alias of UTC (Etc/UTC, GMT, Zulu…) resolves to 'UTC'; a runtime that keeps the
    // name as given may answer 'Etc/UTC'.
    resolved = id === 'Etc/UTC' || id === 'Etc/GMT' ? 'UTC' : (RENAMED[id] ?? id);
  } catch {
    resolved = null;
  }
  // Names are few; garbage is not cached, so that a caller cannot grow the map without bound.
  if (resolved !== null) canonical.set(key, resolved);
  return resolved;
}

/** One formatter per zone: building one costs far more than formatting with it. */
const offsetFormatters = new Map<string, Intl.DateTimeFormat>();

function offsetFormatter(zone: string): Intl.DateTimeFormat {
  let formatter = offsetFormatters.get(zone);
  if (!formatter) {
    // The year is there only because a format needs one field; 'longOffset' reads "GMT+05:45",
    // or "GMT" for a zero offset.
    formatter = new Intl.DateTimeFormat('en-US', { timeZone: zone, year: 'numeric', timeZoneName: 'longOffset' });
    offsetFormatters.set(zone, formatter);
  }
  return formatter;
}

const LONG_OFFSET = /GMT(?:([+\-\u2212])(\d{2}):(\d{2})(?::(\d{2}))?)?$/;

/** The zone's offset from UTC at instant `at` (epoch ms), in ms, east positive. */
export function zoneOffsetMs(zone: string, at: number): number {
  const text = offsetFormatter(zone).format(at);
  const match = LONG_OFFSET.exec(text);
  if (!match) throw new Error(`unexpected offset ${JSON.stringify(text)} for ${zone}`);
  const [, sign, hours, minutes, seconds] = match;
  if (sign === undefined) return 0;
  const size = Number(hours) * HOUR + Number(minutes) * MINUTE + Number(seconds ?? 0) * 1000;
  return sign === '+' ? size : -size;
}

const pad = (value: number, width = 2) => String(value).padStart(width, '0');

function offsetText(offsetMs: number): string {
  const size = Math.abs(offsetMs);
  const hours = Math.floor(size / HOUR);
  const minutes = Math.floor((size % HOUR) / MINUTE);
  const seconds = Math.floor((size % MINUTE) / 1000);
  return `${offsetMs < 0 ? '-' : '+'}${pad(hours)}:${pad(minutes)}${seconds ? `:${pad(seconds)}` : ''}`;
}

/** The zone's offset at `at` as ISO 8601 writes it: '+05:45', '-04:00', '+00:00'. */
export function utcOffsetText(zone: string, at: number): string {
  return offsetText(zoneOffsetMs(zone, at));
}

/** `at` as ISO 8601 in the zone with its offset at that instant, seconds precision: '2026-03-29T01:00:00+01:00' ('Z' never; UTC gives '+00:00'). */
export function isoInZone(zone: string, at: number): string {
  const second = Math.floor(at / 1000) * 1000;
  const offset = zoneOffsetMs(zone, second);
  const wall = new Date(second + offset);
  const year = wall.getUTCFullYear();
  const yearText = year >= 0 && year <= 9999 ? pad(year, 4) : `${year < 0 ? '-' : '+'}${pad(Math.abs(year), 6)}`;
  return (
    `${yearText}-${pad(wall.getUTCMonth() + 1)}-${pad(wall.getUTCDate())}` +
    `T${pad(wall.getUTCHours())}:${pad(wall.getUTCMinutes())}:${pad(wall.getUTCSeconds())}${offsetText(offset)}`
  );
}

/** Floored modulo: `mod(-1, 7)` is 6. */
const mod = (a: number, n: number) => ((a % n) + n) % n;

/**
 * Where buckets start on the local wall clock (local time = instant + offset, counted from the
 * local 1970-01-01T00:00): multiples of `unit`, of which only every `every`-th counts, starting
 * from the `phase`-th.
 */
interface Grid {
  unit: number;
  every: number;
  phase: number;
}

function gridOf(intervalMs: number): Grid {
  if (!Number.isSafeInteger(intervalMs) || intervalMs <= 0) {
    throw new RangeError(`bucket interval must be a positive whole number of milliseconds, not ${intervalMs}`);
  }
  if (intervalMs % DAY === 0) {
    const days = intervalMs / DAY;
    return { unit: DAY, every: days, phase: days === 7 ? MONDAY_PHASE : 0 };
  }
  if (DAY % intervalMs === 0) return { unit: intervalMs, every: 1, phase: 0 };
  throw new RangeError(`bucket interval of ${intervalMs} ms neither divides a day nor is whole days`);
}

/** The first bucket start on the local clock at or after `local` (after it when `strict`). */
function nextOnGrid(grid: Grid, local: number, strict: boolean): number {
  let step = Math.floor(local / grid.unit);
  if (strict || step * grid.unit < local) step += 1;
  step += mod(grid.phase - step, grid.every);
  return step * grid.unit;
}

/**
 * Walks the bucket edges of one zone forward. An edge is an instant whose local time is on the
 * grid or, where the clock jumps forward over a grid time, the instant of the jump.
 *
 * Offsets are looked up ahead, a day at a time (or a bucket, when longer): an offset that is the
 * same at both ends of such a stretch is taken to hold all along it, so hourly buckets cost one
 * lookup a day, and a change is found by bisection to the millisecond. The zone data never
 * changes the offset twice within a day.
 */
class EdgeWalk {
  /** The last edge (at first, where the walk starts). */
  private at: number;
  /** The offset at `at`. */
  private offset: number;
  /** Every instant from `at` to here has `offset`. */
  private steadyUntil: number;
  /** The next change of offset when it is known, with the offset it brings. */
  private change: { at: number; offset: number } | null = null;

  constructor(
    private readonly zone: string,
    private readonly grid: Grid,
    start: number,
  ) {
    this.at = start;
    this.offset = zoneOffsetMs(zone, start);
    this.steadyUntil = start;
  }

  /** The first edge after the last one. */
  next(): number {
    let offset = this.offset;
    let from = this.at;
    let target = nextOnGrid(this.grid, from + offset, true);
    for (;;) {
      const candidate = target - offset;
      if (candidate > this.steadyUntil) this.lookAhead(from, candidate, offset);
      if (candidate <= this.steadyUntil) return this.land(candidate, offset);
      // The offset changes at or before the candidate: the clock there is another one.
      const change = this.change!;
      this.change = null;
      offset = change.offset;
      this.steadyUntil = change.at;
      // Local time just before the change was short of the target: a clock that jumps to it or
      // past it (a midnight skipped in Santiago) starts the bucket at the jump.
      if (change.at + offset >= target) return this.land(change.at, offset);
      // The clock went back, or forward but short of the target: the next grid time on the new
      // clock. After a fall-back, hours are repeated, each an edge of its own; a day is not
      // (Havana's clocks go back from 01:00 to midnight: that day lasts 25 hours, not one).
      from = change.at;
      const lastLocal = this.grid.unit === DAY ? this.at + this.offset + 1 : -Infinity;
      target = nextOnGrid(this.grid, Math.max(change.at + offset, lastLocal), false);
    }
  }

  private land(edge: number, offset: number): number {
    this.at = edge;
    this.offset = offset;
    return edge;
  }

  /** Extends `steadyUntil` to `candidate` or beyond, or else finds the change before it. */
  private lookAhead(from: number, candidate: number, offset: number): void {
    // A change already found lies between `steadyUntil` and the candidate.
    if (this.change) return;
    const probe = Math.max(candidate, from + DAY);
    if (zoneOffsetMs(this.zone, probe) === offset) {
      this.steadyUntil = probe;
      return;
    }
    let lo = this.steadyUntil;
    let hi = probe;
    while (hi - lo > 1) {
      const mid = lo + Math.floor((hi - lo) / 2);
      if (zoneOffsetMs(this.zone, mid) === offset) lo = mid;
      else hi = mid;
    }
    this.steadyUntil = lo;
    this.change = { at: hi, offset: zoneOffsetMs(this.zone, hi) };
  }
}

/**
 * Bucket edges of the window [from, to] (epoch ms, both included) for buckets of `intervalMs`
 * in the zone's wall clock: strictly increasing instants e0 <= from < e1 < ... < en, en > to,
 * bucket i being [e_i, e_{i+1}). Intervals that divide a day (1s … 12h) align to the local
 * midnight (a local 6h bucket starts at local 00:00, 06:00, …); whole days align to local
 * midnights (a local day is 23 or 25 hours across a DST change), 7d to local Mondays, other
 * whole-day counts to local days since 1970-01-01 divisible by n. Across a fall-back change
 * the repeated local hour gives two distinct buckets (same wall-clock label, different offset);
 * across spring-forward the skipped local hour gives none. Where the clock jumps over a bucket's
 * start (a midnight in Santiago or Havana, 02:00 on Lord Howe whose clocks go from 02:00 to
 * 02:30), that bucket starts at the jump, so that local days stay whole and sub-day buckets nest
 * in them. Throws RangeError for an interval that neither divides a day nor is whole days, for
 * from > to, and for a window of more than MAX_BUCKETS buckets.
 */
export function bucketEdges(zone: string, from: number, to: number, intervalMs: number): number[] {
  const grid = gridOf(intervalMs);
  if (!Number.isSafeInteger(from) || !Number.isSafeInteger(to) || from > to) {
    throw new RangeError(`bucket window must be whole milliseconds with from <= to, not [${from}, ${to}]`);
  }
  // A local day lasts 23 to 26 hours: the count of buckets is within a factor of two of this.
  if ((to - from) / intervalMs >= MAX_BUCKETS * 2) {
    throw new RangeError(`more than ${MAX_BUCKETS} buckets of ${intervalMs} ms in the window`);
  }
  // The edge at or before `from` is found walking from a point before it by more than the longest
  // bucket: less than two intervals (a bucket that ends at a fall-back change is followed by one
  // of up to a whole interval; a local day is at most a few hours longer than 24).
  const walk = new EdgeWalk(zone, grid, from - 2 * intervalMs);
  let first: number | null = null;
  let edge = walk.next();
  while (edge <= from) {
    first = edge;
    edge = walk.next();
  }
  if (first === null) throw new Error(`no bucket edge found before ${from} in ${zone}`);
  const edges = [first, edge];
  while (edge <= to) {
    if (edges.length > MAX_BUCKETS) {
      throw new RangeError(`more than ${MAX_BUCKETS} buckets of ${intervalMs} ms in the window`);
    }
    edge = walk.next();
    edges.push(edge);
  }
  return edges;
}
