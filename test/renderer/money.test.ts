import { describe, expect, it } from 'vitest';
import {
  exactPkrTitle,
  formatMicroPkr,
  formatMicroPkrFixed,
  microToPkrText,
  parsePkr,
} from '../../renderer/src/lib/money.js';

describe('PKR typed by a person, micro-PKR sent to the server', () => {
  it('converts exactly, without float rounding', () => {
    expect(parsePkr('0.1')).toEqual({ ok: true, micro: 100_000 });
    expect(parsePkr('1,250.5')).toEqual({ ok: true, micro: 1_250_500_000 });
    expect(parsePkr(' 12.345678 ')).toEqual({ ok: true, micro: 12_345_678 });
    expect(parsePkr('0.000001')).toEqual({ ok: true, micro: 1 });
    expect(parsePkr('3.')).toEqual({ ok: true, micro: 3_000_000 });
    // 0.29 * 1e6 is 289999.99999999994 in floating point.
    expect(parsePkr('0.29')).toEqual({ ok: true, micro: 290_000 });
  });

  it('refuses what it cannot convert exactly, saying why', () => {
    expect(parsePkr('')).toEqual({ ok: false, error: 'enter an amount in PKR' });
    expect(parsePkr('-5')).toMatchObject({ ok: false });
    expect(parsePkr('1e3')).toMatchObject({ ok: false });
    expect(parsePkr('1.0000001')).toEqual({ ok: false, error: 'PKR amounts have at most 6 decimals' });
    expect(parsePkr('99999999999999999')).toEqual({ ok: false, error: 'that amount is too large' });
  });

  it('reads micro-PKR back as exact PKR text, and round-trips', () => {
    expect(microToPkrText(5_000_000)).toBe('5.00');
    expect(microToPkrText(12_345_678)).toBe('12.345678');
    expect(microToPkrText(1)).toBe('0.000001');
    for (const micro of [0, 1, 10, 999_999, 1_000_000, 123_456_789_012, Number.MAX_SAFE_INTEGER]) {
      expect(parsePkr(microToPkrText(micro))).toEqual({ ok: true, micro });
    }
  });

  it('shows an unknown amount as a dash, never as zero', () => {
    expect(formatMicroPkr(null)).toBe('–');
    expect(formatMicroPkr(undefined)).toBe('–');
    expect(formatMicroPkr(0)).not.toBe('–');
  });
});

describe('money in columns: fixed decimals, the exact amount on hover', () => {
  it('shows every amount of a context with the same decimals, a trace as "< 0.01", unknown as a dash', () => {
    const shown = [148_134, 4_053_000, 176_200, 1_250_500_000].map((micro) => formatMicroPkrFixed(micro));
    expect(shown.map((text) => text.replace(/[^0-9.]/g, '').split('.')[1]?.length)).toEqual([2, 2, 2, 2]);
    expect(formatMicroPkrFixed(4_053_000)).toBe((4.05).toLocaleString(undefined, { minimumFractionDigits: 2 }));
    expect(formatMicroPkrFixed(4_999)).toBe('< 0.01');
    expect(formatMicroPkrFixed(5_000)).not.toBe('< 0.01');
    expect(formatMicroPkrFixed(0)).toBe((0).toLocaleString(undefined, { minimumFractionDigits: 2 }));
    expect(formatMicroPkrFixed(null)).toBe('–');
    expect(formatMicroPkrFixed(12_345_678, 4).replace(/[^0-9.]/g, '')).toBe('12.3457');
    expect(formatMicroPkrFixed(1_234_567_890_000)).toBe('1,234,567.89');
    expect(formatMicroPkrFixed(10_000)).toBe('0.01');
  });

  it('gives the exact amount on hover, saying when a rate was rounded to the micro-PKR', () => {
    expect(exactPkrTitle(148_134)).toBe('0.148134 PKR (148,134 micro-PKR)');
    expect(exactPkrTitle(2_000_000)).toBe('2.00 PKR (2,000,000 micro-PKR)');
    expect(exactPkrTitle(1_000_000 / 3)).toBe('0.333333 PKR (333,333 micro-PKR), rounded');
  });
});
