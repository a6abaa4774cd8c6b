import { describe, expect, it } from 'vitest';
import {
  bucketEdges,
  canonicalZone,
  isoInZone,
  MAX_BUCKETS,
  utcOffsetText,
  zoneOffsetMs,
} from '../../server/domain/reporting-zone.js';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

const at = (iso: string) => Date.parse(iso);
/** The edges as UTC instants, to compare with instants written out by hand. */
const utc = (edges: number[]) => edges.map((edge) => new Date(edge).toISOString().replace('.000', ''));
/** The edges as the zone's wall clock reads them. */
const local = (zone: string, edges: number[]) => edges.map((edge) => isoInZone(zone, edge));
/** Bucket lengths in hours. */
const hours = (edges: number[]) => edges.slice(1).map((edge, i) => (edge - edges[i]!) / HOUR);

const knowsLordHowe = canonicalZone('Australia/Lord_Howe') === 'Australia/Lord_Howe';

describe('canonicalZone', () => {
  it('gives the IANA name, whatever the case of the name given', () => {
    expect(canonicalZone('Asia/Karachi')).toBe('Asia/Karachi');
    expect(canonicalZone('asia/karachi')).toBe('Asia/Karachi');
    expect(canonicalZone('AMERICA/NEW_YORK')).toBe('America/New_York');
    expect(canonicalZone('europe/london')).toBe('Europe/London');
    expect(canonicalZone('America/Argentina/Buenos_Aires')).toBe('America/Argentina/Buenos_Aires');
  });

  it('gives UTC for utc and its aliases', () => {
    expect(canonicalZone('UTC')).toBe('UTC');
    expect(canonicalZone('utc')).toBe('UTC');
    expect(canonicalZone('Etc/UTC')).toBe('UTC');
    expect(canonicalZone('GMT')).toBe('UTC');
  });

  it("gives today's name of a renamed zone, not the old one ICU keeps", () => {
    expect(canonicalZone('Asia/Kolkata')).toBe('Asia/Kolkata');
    expect(canonicalZone('asia/calcutta')).toBe('Asia/Kolkata');
    expect(canonicalZone('asia/kathmandu')).toBe('Asia/Kathmandu');
    expect(canonicalZone('Asia/Katmandu')).toBe('Asia/Kathmandu');
    expect(canonicalZone('Europe/Kiev')).toBe('Europe/Kyiv');
    expect(canonicalZone('Asia/Saigon')).toBe('Asia/Ho_Chi_Minh');
  });

  it('gives null for names no zone has, offsets and garbage', () => {
    for (const name of [
      'Mars/Olympus',
      '',
      ' ',
      'UTC+5',
      'UTC+05:00',
      'GMT-3',
      '+05:00',
      '-0500',
      'Asia/Karachi ',
      ' Asia/Karachi',
      'Asia/Karachi\n',
      'Asia/Karachi;DROP TABLE',
      '../etc/passwd',
      'Asia',
      'Z',
      'x'.repeat(65),
    ]) {
      expect(canonicalZone(name), JSON.stringify(name)).toBeNull();
    }
  });

  it('maps every zone this runtime lists to a name it accepts and maps to itself', () => {
    for (const name of Intl.supportedValuesOf('timeZone')) {
      const canonical = canonicalZone(name);
      expect(canonical, name).not.toBeNull();
      expect(canonicalZone(canonical!), name).toBe(canonical);
      expect(Number.isInteger(zoneOffsetMs(canonical!, at('2026-06-01T00:00:00Z')) / MINUTE), name).toBe(true);
    }
  });
});

describe('zoneOffsetMs, isoInZone and utcOffsetText', () => {
  it('reads whole-hour, half-hour and quarter-hour offsets, east positive', () => {
    const may = at('2026-05-01T12:00:00Z');
    expect(zoneOffsetMs('UTC', may)).toBe(0);
    expect(zoneOffsetMs('Asia/Karachi', may)).toBe(5 * HOUR);
    expect(zoneOffsetMs('Asia/Kolkata', may)).toBe(5 * HOUR + 30 * MINUTE);
    expect(zoneOffsetMs('Asia/Kathmandu', may)).toBe(5 * HOUR + 45 * MINUTE);
    expect(zoneOffsetMs('America/New_York', may)).toBe(-4 * HOUR);
    expect(zoneOffsetMs('America/St_Johns', at('2026-01-15T12:00:00Z'))).toBe(-(3 * HOUR + 30 * MINUTE));
    expect(zoneOffsetMs('Europe/London', at('2026-01-15T12:00:00Z'))).toBe(0);
    expect(zoneOffsetMs('Europe/London', may)).toBe(HOUR);
  });

  it('changes offset at the instant of the change, not before', () => {
    // London springs forward at 01:00 UTC on 29 March 2026 and falls back at 01:00 UTC on 25 October.
    expect(zoneOffsetMs('Europe/London', at('2026-03-29T00:59:59.999Z'))).toBe(0);
    expect(zoneOffsetMs('Europe/London', at('2026-03-29T01:00:00Z'))).toBe(HOUR);
    expect(zoneOffsetMs('Europe/London', at('2026-10-25T00:59:59.999Z'))).toBe(HOUR);
    expect(zoneOffsetMs('Europe/London', at('2026-10-25T01:00:00Z'))).toBe(0);
  });

  it('writes the local time with its offset, to the second, never Z', () => {
    expect(isoInZone('UTC', at('2026-05-01T10:20:30.999Z'))).toBe('2026-05-01T10:20:30+00:00');
    expect(isoInZone('Asia/Karachi', at('2026-05-01T19:00:00Z'))).toBe('2026-05-02T00:00:00+05:00');
    expect(isoInZone('Asia/Kathmandu', at('2026-05-01T18:15:00Z'))).toBe('2026-05-02T00:00:00+05:45');
    expect(isoInZone('America/New_York', at('2026-01-01T04:59:59Z'))).toBe('2025-12-31T23:59:59-05:00');
    expect(isoInZone('America/St_Johns', at('2026-01-15T12:00:00Z'))).toBe('2026-01-15T08:30:00-03:30');
    expect(isoInZone('Europe/Paris', at('2026-03-29T00:00:00Z'))).toBe('2026-03-29T01:00:00+01:00');
    expect(isoInZone('Europe/Paris', at('2026-03-29T01:00:00Z'))).toBe('2026-03-29T03:00:00+02:00');
    // Before the epoch, seconds round down, as the wall clock reads them.
    expect(isoInZone('UTC', -1)).toBe('1969-12-31T23:59:59+00:00');
  });

  it('writes the offset alone as ISO 8601 does', () => {
    const may = at('2026-05-01T12:00:00Z');
    expect(utcOffsetText('UTC', may)).toBe('+00:00');
    expect(utcOffsetText('Asia/Karachi', may)).toBe('+05:00');
    expect(utcOffsetText('Asia/Kathmandu', may)).toBe('+05:45');
    expect(utcOffsetText('America/New_York', may)).toBe('-04:00');
    expect(utcOffsetText('America/St_Johns', may)).toBe('-02:30');
  });

  it('throws a RangeError for a zone the runtime does not know', () => {
    expect(() => zoneOffsetMs('Mars/Olympus', 0)).toThrow(RangeError);
  });
});

describe('bucketEdges', () => {
  describe('in UTC', () => {
    it('gives hourly edges around the window, both ends included', () => {
      const edges = bucketEdges('UTC', at('2026-05-01T10:30:00Z'), at('2026-05-01T12:00:00Z'), HOUR);
      expect(utc(edges)).toEqual([
        '2026-05-01T10:00:00Z',
        '2026-05-01T11:00:00Z',
        '2026-05-01T12:00:00Z',
        '2026-05-01T13:00:00Z',
      ]);
    });

    it('gives one bucket for a window of one instant on an edge', () => {
      const edges = bucketEdges('UTC', at('2026-05-01T10:00:00Z'), at('2026-05-01T10:00:00Z'), HOUR);
      expect(utc(edges)).toEqual(['2026-05-01T10:00:00Z', '2026-05-01T11:00:00Z']);
    });

    it('gives 5-minute, daily, weekly (Mondays) and 2-day (even days since 1970) edges', () => {
      expect(utc(bucketEdges('UTC', at('2026-05-01T10:07:00Z'), at('2026-05-01T10:12:00Z'), 5 * MINUTE))).toEqual([
        '2026-05-01T10:05:00Z',
        '2026-05-01T10:10:00Z',
        '2026-05-01T10:15:00Z',
      ]);
      expect(utc(bucketEdges('UTC', at('2026-05-01T10:00:00Z'), at('2026-05-02T10:00:00Z'), DAY))).toEqual([
        '2026-05-01T00:00:00Z',
        '2026-05-02T00:00:00Z',
        '2026-05-03T00:00:00Z',
      ]);
      // 1 May 2026 is a Friday; the weeks start on Monday 27 April and Monday 4 May.
      expect(utc(bucketEdges('UTC', at('2026-05-01T10:00:00Z'), at('2026-05-04T00:00:00Z'), 7 * DAY))).toEqual([
        '2026-04-27T00:00:00Z',
        '2026-05-04T00:00:00Z',
        '2026-05-11T00:00:00Z',
      ]);
      // 1 May 2026 is day 20574 since 1970-01-01, an even one.
      expect(utc(bucketEdges('UTC', at('2026-05-02T12:00:00Z'), at('2026-05-02T12:00:00Z'), 2 * DAY))).toEqual([
        '2026-05-01T00:00:00Z',
        '2026-05-03T00:00:00Z',
      ]);
    });
  });

  describe('in Asia/Karachi (+05:00)', () => {
    it('starts the local day at 19:00 UTC', () => {
      const edges = bucketEdges('Asia/Karachi', at('2026-05-01T00:00:00Z'), at('2026-05-02T00:00:00Z'), DAY);
      expect(utc(edges)).toEqual(['2026-04-30T19:00:00Z', '2026-05-01T19:00:00Z', '2026-05-02T19:00:00Z']);
      expect(local('Asia/Karachi', edges)).toEqual([
        '2026-05-01T00:00:00+05:00',
        '2026-05-02T00:00:00+05:00',
        '2026-05-03T00:00:00+05:00',
      ]);
    });

    it('starts the local week on Monday at 00:00 local, Sunday 19:00 UTC', () => {
      const edges = bucketEdges('Asia/Karachi', at('2026-05-03T20:00:00Z'), at('2026-05-03T20:00:00Z'), 7 * DAY);
      expect(utc(edges)).toEqual(['2026-05-03T19:00:00Z', '2026-05-10T19:00:00Z']);
      expect(local('Asia/Karachi', edges)).toEqual(['2026-05-04T00:00:00+05:00', '2026-05-11T00:00:00+05:00']);
    });

    it('counts 2-day buckets in local days', () => {
      // 17:00 on 2 May in Karachi: the bucket of local days 1 and 2 May.
      const edges = bucketEdges('Asia/Karachi', at('2026-05-02T12:00:00Z'), at('2026-05-02T12:00:00Z'), 2 * DAY);
      expect(utc(edges)).toEqual(['2026-04-30T19:00:00Z', '2026-05-02T19:00:00Z']);
    });
  });

  describe('in Asia/Kathmandu (+05:45)', () => {
    it('puts hour edges at a quarter past the UTC hour', () => {
      const edges = bucketEdges('Asia/Kathmandu', at('2026-05-01T10:00:00Z'), at('2026-05-01T11:00:00Z'), HOUR);
      expect(utc(edges)).toEqual(['2026-05-01T09:15:00Z', '2026-05-01T10:15:00Z', '2026-05-01T11:15:00Z']);
      expect(local('Asia/Kathmandu', edges)).toEqual([
        '2026-05-01T15:00:00+05:45',
        '2026-05-01T16:00:00+05:45',
        '2026-05-01T17:00:00+05:45',
      ]);
    });

    it('starts the local day at 18:15 UTC', () => {
      const edges = bucketEdges('Asia/Kathmandu', at('2026-05-01T18:14:59Z'), at('2026-05-01T18:15:00Z'), DAY);
      expect(utc(edges)).toEqual(['2026-04-30T18:15:00Z', '2026-05-01T18:15:00Z', '2026-05-02T18:15:00Z']);
    });
  });

  describe('in Asia/Kolkata (+05:30)', () => {
    it('aligns 6-hour buckets to local midnight and 30-minute ones to the local half hour', () => {
      const six = bucketEdges('Asia/Kolkata', at('2026-05-01T00:00:00Z'), at('2026-05-01T12:00:00Z'), 6 * HOUR);
      expect(utc(six)).toEqual([
        '2026-04-30T18:30:00Z',
        '2026-05-01T00:30:00Z',
        '2026-05-01T06:30:00Z',
        '2026-05-01T12:30:00Z',
      ]);
      expect(local('Asia/Kolkata', six)).toEqual([
        '2026-05-01T00:00:00+05:30',
        '2026-05-01T06:00:00+05:30',
        '2026-05-01T12:00:00+05:30',
        '2026-05-01T18:00:00+05:30',
      ]);
      const half = bucketEdges('Asia/Kolkata', at('2026-05-01T10:10:00Z'), at('2026-05-01T10:40:00Z'), 30 * MINUTE);
      expect(utc(half)).toEqual(['2026-05-01T10:00:00Z', '2026-05-01T10:30:00Z', '2026-05-01T11:00:00Z']);
    });
  });

  describe('in Europe/London, across the 2026 changes', () => {
    it('makes 29 March a 23-hour day and 25 October a 25-hour day', () => {
      const spring = bucketEdges('Europe/London', at('2026-03-28T12:00:00Z'), at('2026-03-29T12:00:00Z'), DAY);
      expect(utc(spring)).toEqual(['2026-03-28T00:00:00Z', '2026-03-29T00:00:00Z', '2026-03-29T23:00:00Z']);
      expect(hours(spring)).toEqual([24, 23]);
      expect(local('Europe/London', spring)).toEqual([
        '2026-03-28T00:00:00+00:00',
        '2026-03-29T00:00:00+00:00',
        '2026-03-30T00:00:00+01:00',
      ]);

      const autumn = bucketEdges('Europe/London', at('2026-10-25T12:00:00Z'), at('2026-10-26T12:00:00Z'), DAY);
      expect(utc(autumn)).toEqual(['2026-10-24T23:00:00Z', '2026-10-26T00:00:00Z', '2026-10-27T00:00:00Z']);
      expect(hours(autumn)).toEqual([25, 24]);
    });

    it('skips 01:00 in spring and gives two 01:00 buckets in autumn', () => {
      const spring = bucketEdges('Europe/London', at('2026-03-29T00:00:00Z'), at('2026-03-29T01:30:00Z'), HOUR);
      expect(local('Europe/London', spring)).toEqual([
        '2026-03-29T00:00:00+00:00',
        '2026-03-29T02:00:00+01:00',
        '2026-03-29T03:00:00+01:00',
      ]);
      expect(utc(spring)).toEqual(['2026-03-29T00:00:00Z', '2026-03-29T01:00:00Z', '2026-03-29T02:00:00Z']);

      const autumn = bucketEdges('Europe/London', at('2026-10-24T23:30:00Z'), at('2026-10-25T02:30:00Z'), HOUR);
      expect(local('Europe/London', autumn)).toEqual([
        '2026-10-25T00:00:00+01:00',
        '2026-10-25T01:00:00+01:00',
        '2026-10-25T01:00:00+00:00',
        '2026-10-25T02:00:00+00:00',
        '2026-10-25T03:00:00+00:00',
      ]);
      expect(utc(autumn)).toEqual([
        '2026-10-24T23:00:00Z',
        '2026-10-25T00:00:00Z',
        '2026-10-25T01:00:00Z',
        '2026-10-25T02:00:00Z',
        '2026-10-25T03:00:00Z',
      ]);
    });
  });

  describe('in America/New_York, across the 2026 changes', () => {
    it('makes 8 March a 23-hour day and 1 November a 25-hour day', () => {
      const spring = bucketEdges('America/New_York', at('2026-03-08T12:00:00Z'), at('2026-03-08T12:00:00Z'), DAY);
      expect(utc(spring)).toEqual(['2026-03-08T05:00:00Z', '2026-03-09T04:00:00Z']);
      expect(local('America/New_York', spring)).toEqual(['2026-03-08T00:00:00-05:00', '2026-03-09T00:00:00-04:00']);
      expect(hours(spring)).toEqual([23]);

      const autumn = bucketEdges('America/New_York', at('2026-11-01T12:00:00Z'), at('2026-11-01T12:00:00Z'), DAY);
      expect(utc(autumn)).toEqual(['2026-11-01T04:00:00Z', '2026-11-02T05:00:00Z']);
      expect(local('America/New_York', autumn)).toEqual(['2026-11-01T00:00:00-04:00', '2026-11-02T00:00:00-05:00']);
      expect(hours(autumn)).toEqual([25]);
    });

    it('gives two buckets labelled 01:00 at the fall-back, with different offsets', () => {
      const edges = bucketEdges('America/New_York', at('2026-11-01T04:00:00Z'), at('2026-11-01T07:59:59Z'), HOUR);
      expect(utc(edges)).toEqual([
        '2026-11-01T04:00:00Z',
        '2026-11-01T05:00:00Z',
        '2026-11-01T06:00:00Z',
        '2026-11-01T07:00:00Z',
        '2026-11-01T08:00:00Z',
      ]);
      expect(local('America/New_York', edges)).toEqual([
        '2026-11-01T00:00:00-04:00',
        '2026-11-01T01:00:00-04:00',
        '2026-11-01T01:00:00-05:00',
        '2026-11-01T02:00:00-05:00',
        '2026-11-01T03:00:00-05:00',
      ]);
    });

    it('skips 02:00 at the spring-forward', () => {
      const edges = bucketEdges('America/New_York', at('2026-03-08T05:00:00Z'), at('2026-03-08T07:59:59Z'), HOUR);
      expect(utc(edges)).toEqual([
        '2026-03-08T05:00:00Z',
        '2026-03-08T06:00:00Z',
        '2026-03-08T07:00:00Z',
        '2026-03-08T08:00:00Z',
      ]);
      expect(local('America/New_York', edges)).toEqual([
        '2026-03-08T00:00:00-05:00',
        '2026-03-08T01:00:00-05:00',
        '2026-03-08T03:00:00-04:00',
        '2026-03-08T04:00:00-04:00',
      ]);
    });

    it('keeps 6-hour buckets on the local clock across the fall-back', () => {
      const edges = bucketEdges('America/New_York', at('2026-11-01T04:00:00Z'), at('2026-11-01T23:00:00Z'), 6 * HOUR);
      expect(local('America/New_York', edges)).toEqual([
        '2026-11-01T00:00:00-04:00',
        '2026-11-01T06:00:00-05:00',
        '2026-11-01T12:00:00-05:00',
        '2026-11-01T18:00:00-05:00',
        '2026-11-02T00:00:00-05:00',
      ]);
      expect(hours(edges)).toEqual([7, 6, 6, 6]);
    });

    it('starts weeks on local Mondays across the change', () => {
      // Monday 2 November 2026 00:00 in New York is 05:00 UTC; Monday 26 October was 04:00 UTC.
      const edges = bucketEdges('America/New_York', at('2026-10-30T12:00:00Z'), at('2026-11-03T12:00:00Z'), 7 * DAY);
      expect(utc(edges)).toEqual(['2026-10-26T04:00:00Z', '2026-11-02T05:00:00Z', '2026-11-09T05:00:00Z']);
      expect(hours(edges)).toEqual([7 * 24 + 1, 7 * 24]);
    });
  });

  describe('where the change falls at midnight (America/Santiago)', () => {
    it('starts a day whose midnight is skipped at the change, 01:00 local', () => {
      // 6 September 2026: clocks go from 24:00 (-04:00) to 01:00 (-03:00) at 04:00 UTC.
      const edges = bucketEdges('America/Santiago', at('2026-09-05T12:00:00Z'), at('2026-09-06T12:00:00Z'), DAY);
      expect(utc(edges)).toEqual(['2026-09-05T04:00:00Z', '2026-09-06T04:00:00Z', '2026-09-07T03:00:00Z']);
      expect(local('America/Santiago', edges)).toEqual([
        '2026-09-05T00:00:00-04:00',
        '2026-09-06T01:00:00-03:00',
        '2026-09-07T00:00:00-03:00',
      ]);
      expect(hours(edges)).toEqual([24, 23]);
    });

    it('nests 6-hour buckets in that day', () => {
      const edges = bucketEdges('America/Santiago', at('2026-09-05T23:00:00Z'), at('2026-09-06T09:00:00Z'), 6 * HOUR);
      expect(local('America/Santiago', edges)).toEqual([
        '2026-09-05T18:00:00-04:00',
        '2026-09-06T01:00:00-03:00',
        '2026-09-06T06:00:00-03:00',
        '2026-09-06T12:00:00-03:00',
      ]);
    });

    it('makes the day before a midnight fall-back 25 hours long', () => {
      // 5 April 2026: clocks go from 24:00 (-03:00) back to 23:00 on the 4th (-04:00) at 03:00 UTC.
      const edges = bucketEdges('America/Santiago', at('2026-04-04T12:00:00Z'), at('2026-04-04T12:00:00Z'), DAY);
      expect(utc(edges)).toEqual(['2026-04-04T03:00:00Z', '2026-04-05T04:00:00Z']);
      expect(local('America/Santiago', edges)).toEqual(['2026-04-04T00:00:00-03:00', '2026-04-05T00:00:00-04:00']);
    });
  });

  describe('where midnight happens twice (America/Havana)', () => {
    it('keeps the day whole: 2 November 2025 lasts 25 hours, one bucket, while its hours repeat', () => {
      // At 05:00 UTC the clocks go back from 01:00 (-04:00) to midnight (-05:00).
      const days = bucketEdges('America/Havana', at('2025-11-01T12:00:00Z'), at('2025-11-03T12:00:00Z'), DAY);
      expect(local('America/Havana', days)).toEqual([
        '2025-11-01T00:00:00-04:00',
        '2025-11-02T00:00:00-04:00',
        '2025-11-03T00:00:00-05:00',
        '2025-11-04T00:00:00-05:00',
      ]);
      expect(hours(days)).toEqual([24, 25, 24]);
      const hourly = bucketEdges('America/Havana', at('2025-11-02T03:30:00Z'), at('2025-11-02T05:30:00Z'), HOUR);
      expect(local('America/Havana', hourly)).toEqual([
        '2025-11-01T23:00:00-04:00',
        '2025-11-02T00:00:00-04:00',
        '2025-11-02T00:00:00-05:00',
        '2025-11-02T01:00:00-05:00',
      ]);
    });
  });

  describe.runIf(knowsLordHowe)('in Australia/Lord_Howe (a 30-minute change)', () => {
    it('makes 5 April a 24.5-hour day and 4 October a 23.5-hour day', () => {
      const autumn = bucketEdges('Australia/Lord_Howe', at('2026-04-05T00:00:00Z'), at('2026-04-05T00:00:00Z'), DAY);
      expect(utc(autumn)).toEqual(['2026-04-04T13:00:00Z', '2026-04-05T13:30:00Z']);
      expect(local('Australia/Lord_Howe', autumn)).toEqual(['2026-04-05T00:00:00+11:00', '2026-04-06T00:00:00+10:30']);
      const spring = bucketEdges('Australia/Lord_Howe', at('2026-10-04T00:00:00Z'), at('2026-10-04T00:00:00Z'), DAY);
      expect(utc(spring)).toEqual(['2026-10-03T13:30:00Z', '2026-10-04T13:00:00Z']);
      expect(hours(spring)).toEqual([23.5]);
    });

    it('folds the repeated half hour into the 01:00 bucket at the fall-back', () => {
      // 02:00 (+11:00) becomes 01:30 (+10:30) at 15:00 UTC on 4 April.
      const edges = bucketEdges('Australia/Lord_Howe', at('2026-04-04T14:00:00Z'), at('2026-04-04T16:00:00Z'), HOUR);
      expect(local('Australia/Lord_Howe', edges)).toEqual([
        '2026-04-05T01:00:00+11:00',
        '2026-04-05T02:00:00+10:30',
        '2026-04-05T03:00:00+10:30',
      ]);
      expect(utc(edges)).toEqual(['2026-04-04T14:00:00Z', '2026-04-04T15:30:00Z', '2026-04-04T16:30:00Z']);
    });

    it('starts a bucket at the change where the clock jumps over 02:00', () => {
      // 02:00 (+10:30) becomes 02:30 (+11:00) at 15:30 UTC on 3 October.
      const edges = bucketEdges('Australia/Lord_Howe', at('2026-10-03T14:30:00Z'), at('2026-10-03T16:00:00Z'), HOUR);
      expect(local('Australia/Lord_Howe', edges)).toEqual([
        '2026-10-04T01:00:00+10:30',
        '2026-10-04T02:30:00+11:00',
        '2026-10-04T03:00:00+11:00',
        '2026-10-04T04:00:00+11:00',
      ]);
      expect(utc(edges)).toEqual([
        '2026-10-03T14:30:00Z',
        '2026-10-03T15:30:00Z',
        '2026-10-03T16:00:00Z',
        '2026-10-03T17:00:00Z',
      ]);
    });
  });

  it('walks a year of hourly buckets: strictly increasing, each 1 hour save the two changes', () => {
    const from = at('2026-01-01T00:00:00Z');
    const to = at('2026-12-31T23:59:59Z');
    const edges = bucketEdges('Europe/London', from, to, HOUR);
    expect(edges[0]).toBe(from);
    expect(edges.at(-1)).toBe(at('2027-01-01T00:00:00Z'));
    // Every hour of 2026 in UTC; London's changes fall on whole UTC hours.
    expect(edges).toHaveLength(365 * 24 + 1);
    expect(new Set(hours(edges))).toEqual(new Set([1]));
    const days = bucketEdges('Europe/London', from, to, DAY);
    expect(days).toHaveLength(366);
    expect(hours(days).filter((length) => length !== 24)).toEqual([23, 25]);
  });

  it('throws a RangeError for an interval that neither divides a day nor is whole days', () => {
    const from = at('2026-05-01T00:00:00Z');
    for (const interval of [7 * MINUTE, 5 * HOUR, 36 * HOUR, 0, -HOUR, 1.5]) {
      expect(() => bucketEdges('UTC', from, from + DAY, interval), String(interval)).toThrow(RangeError);
    }
  });

  it('throws a RangeError for a window that ends before it starts, or holds too many buckets', () => {
    const from = at('2026-05-01T00:00:00Z');
    expect(() => bucketEdges('UTC', from, from - 1, HOUR)).toThrow(RangeError);
    expect(() => bucketEdges('UTC', from, from + (MAX_BUCKETS + 1) * 1000, 1000)).toThrow(RangeError);
    expect(() => bucketEdges('UTC', from, from + 400 * DAY * 1000, 1000)).toThrow(RangeError);
  });

  it('throws a RangeError for an unknown zone', () => {
    expect(() => bucketEdges('Mars/Olympus', 0, HOUR, HOUR)).toThrow(RangeError);
  });
});
