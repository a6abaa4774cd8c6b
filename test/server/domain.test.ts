import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { formatPkr, microAtLeast, pkrToMicro } from '../../server/domain/money.js';
import { parseIsoTimestamp } from '../../server/domain/time.js';
import { keyHint } from '../../server/domain/vault.js';
import { fileLines } from '../../server/ingest/ndjson-lines.js';

describe('PKR figures in messages', () => {
  it.each([
    [5_000_000, '5.00'],
    [12_340_000, '12.34'],
    [12_345_678, '12.345678'],
    [1_500_000_000, '1500.00'],
    [1, '0.000001'],
    [0, '0.00'],
    [10_000, '0.01'],
    [123_400, '0.1234'],
  ])('%i micro-PKR reads %s PKR', (micro, text) => {
    expect(formatPkr(micro)).toBe(text);
  });

  it('never shows two different amounts as the same text', () => {
    expect(formatPkr(12_344_900)).not.toBe(formatPkr(12_345_100));
  });

  it('rounds PKR to the nearest micro-PKR', () => {
    expect(pkrToMicro(12.3456785)).toBe(12_345_679);
    expect(pkrToMicro(0.1 + 0.2)).toBe(300_000);
    expect(pkrToMicro(1000.5)).toBe(1_000_500_000);
  });
});

describe('ISO 8601 timestamps', () => {
  it('reads a time without offset as UTC', () => {
    expect(parseIsoTimestamp('2030-01-02T03:04:05')).toBe(Date.UTC(2030, 0, 2, 3, 4, 5));
  });

  it('honours Z and numeric offsets', () => {
    expect(parseIsoTimestamp('2030-01-02T03:04:05Z')).toBe(Date.UTC(2030, 0, 2, 3, 4, 5));
    expect(parseIsoTimestamp('2030-01-02T08:04:05+05:00')).toBe(Date.UTC(2030, 0, 2, 3, 4, 5));
    expect(parseIsoTimestamp('2030-01-02T08:04:05+0500')).toBe(Date.UTC(2030, 0, 2, 3, 4, 5));
    expect(parseIsoTimestamp('2030-01-02T03:04:05.123456Z')).toBe(Date.UTC(2030, 0, 2, 3, 4, 5, 123));
  });

  it('reads the form every export writes, refusing the dates Date.parse would roll over', () => {
    expect(parseIsoTimestamp('2030-01-02T03:04:05.123Z')).toBe(Date.UTC(2030, 0, 2, 3, 4, 5, 123));
    expect(parseIsoTimestamp('2028-02-29T23:59:59.999Z')).toBe(Date.UTC(2028, 1, 29, 23, 59, 59, 999));
    expect(parseIsoTimestamp('2030-02-30T00:00:00.000Z')).toBeNull();
    expect(parseIsoTimestamp('2030-04-31T12:00:00.000Z')).toBeNull();
    expect(parseIsoTimestamp('2030-13-01T00:00:00.000Z')).toBeNull();
    expect(parseIsoTimestamp('2030-01-02T23:60:00.000Z')).toBeNull();
    // ISO 8601's end of a day, which the general form takes as the next midnight.
    expect(parseIsoTimestamp('2030-01-02T24:00:00.000Z')).toBe(Date.UTC(2030, 0, 3));
    // Centuries are leap years only every fourth; years before 100 are not read as 1900 onwards.
    expect(parseIsoTimestamp('1900-02-29T00:00:00.000Z')).toBeNull();
    expect(parseIsoTimestamp('2000-02-29T00:00:00.000Z')).toBe(Date.UTC(2000, 1, 29));
    expect(parseIsoTimestamp('0050-06-01T00:00:00.000Z')).toBe(new Date(0).setUTCFullYear(50, 5, 1));
    expect(parseIsoTimestamp('9999-12-31T23:59:59.999Z')).toBe(Date.UTC(9999, 11, 31, 23, 59, 59, 999));
  });

  it('reads back ~70,000 date-times of two centuries as toISOString wrote them', () => {
    const wrong: string[] = [];
    // A day, an hour and 1.237 s apart from 1950 to 2150: every time of day, nearly every date.
    for (let ms = Date.UTC(1950, 0, 1); ms < Date.UTC(2150, 0, 1); ms += 86_400_000 + 3_601_237) {
      const text = new Date(ms).toISOString();
      if (parseIsoTimestamp(text) !== ms) wrong.push(text);
    }
    expect(wrong).toEqual([]);
  });

  it('accepts a bare date as midnight UTC', () => {
    expect(parseIsoTimestamp('2030-01-02')).toBe(Date.UTC(2030, 0, 2));
  });

  it.each(['', 'tomorrow', '2030-02-30T00:00:00Z', '2030-13-01', '2030-01-02T25:00:00Z', '1735689600', '2030-1-2'])(
    'refuses %j',
    (text) => {
      expect(parseIsoTimestamp(text)).toBeNull();
    },
  );
});

describe('vault key hints', () => {
  it('shows the last four characters of a real provider key', () => {
    expect(keyHint('sk-proj-abcdefghijklmnop1234')).toBe('…1234');
  });

  it('never shows more than a third of a short key', () => {
    expect(keyHint('abc')).toBe('…c');
    expect(keyHint('ab')).toBe('…');
    expect(keyHint('abcdefghi')).toBe('…ghi');
  });
});

describe('reading an NDJSON file line by line', () => {
  it('splits across chunk boundaries, multi-byte characters and CRLF endings', () => {
    const dir = mkdtempSync(join(tmpdir(), 'gc-lines-'));
    try {
      const path = join(dir, 'rows.ndjson');
      const lines = ['{"a":"é€😀"}', '', '{"b":2}', 'last line without newline'];
      writeFileSync(path, lines.slice(0, 3).join('\r\n') + '\n' + lines[3]);
      expect([...fileLines(path, 3)]).toEqual(lines);
      expect([...fileLines(path, 1 << 20)]).toEqual(lines);
      // A lone carriage return is the line's own, and an empty file has no lines.
      writeFileSync(path, 'a\rb\r\n\r\n\n');
      expect([...fileLines(path, 2)]).toEqual(['a\rb', '', '']);
      writeFileSync(path, '');
      expect([...fileLines(path, 2)]).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('the smallest micro-PKR amount at or above a PKR figure', () => {
  it.each([0, 0.1, 0.3, 1.000001, 12.3456785, 0.0000001])('matches cost_pkr >= %d exactly', (pkr) => {
    const micro = microAtLeast(pkr);
    expect(micro / 1e6).toBeGreaterThanOrEqual(pkr);
    expect((micro - 1) / 1e6).toBeLessThan(pkr);
  });

  it('answers at once for amounts beyond any settled cost', () => {
    expect(microAtLeast(1e20)).toBe(1e26);
    expect(microAtLeast(Infinity)).toBe(Infinity);
  });
});
