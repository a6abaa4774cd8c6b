import { UNKNOWN } from './format.js';

/**
 * PKR as people type it, micro-PKR as the server counts it. Conversion works on the decimal
 * text, not on floats, so 0.1 PKR is exactly 100000 micro-PKR and nothing is lost at the
 * sixth decimal.
 */

export const MICRO_PER_PKR = 1_000_000;
const DECIMALS = 6;
const PKR_TEXT = /^(\d+)(?:\.(\d*))?$/;

export type ParsedPkr = { ok: true; micro: number } | { ok: false; error: string };

/** Parses a PKR amount ("1,250.5" or "1250.50") into whole micro-PKR. */
export function parsePkr(text: string): ParsedPkr {
  const cleaned = text.trim().replace(/[,\s_]/g, '');
  if (cleaned === '') return { ok: false, error: 'enter an amount in PKR' };
  const match = PKR_TEXT.exec(cleaned);
  if (!match) return { ok: false, error: 'enter a positive amount in PKR, such as 1500 or 12.75' };
  const whole = match[1] ?? '0';
  const fraction = match[2] ?? '';
  if (fraction.length > DECIMALS) return { ok: false, error: 'PKR amounts have at most 6 decimals' };
  const micro = Number(BigInt(whole) * BigInt(MICRO_PER_PKR) + BigInt(fraction.padEnd(DECIMALS, '0') || '0'));
  if (!Number.isSafeInteger(micro)) return { ok: false, error: 'that amount is too large' };
  return { ok: true, micro };
}

/** PKR as the server sends them (micro-PKR over a million, as a double) back to its whole micro-PKR. */
export function pkrToMicro(pkr: number): number {
  return Math.round(pkr * MICRO_PER_PKR);
}

/** Micro-PKR as exact PKR text: two decimals, and as many more as needed ("5.00", "12.345678"). */
export function microToPkrText(micro: number): string {
  const sign = micro < 0 ? '-' : '';
  const abs = BigInt(Math.abs(Math.trunc(micro)));
  const whole = abs / BigInt(MICRO_PER_PKR);
  const fraction = (abs % BigInt(MICRO_PER_PKR)).toString().padStart(DECIMALS, '0').replace(/0+$/, '').padEnd(2, '0');
  return `${sign}${whole.toString()}.${fraction}`;
}

const grouped = new Intl.NumberFormat(undefined, { minimumFractionDigits: 2, maximumFractionDigits: 6 });

/**
 * The figure alone, for a column whose header says PKR: grouped digits, every decimal the
 * server settled up to six; null is unknown, not zero.
 */
export function formatPkrFigure(pkr: number | null | undefined): string {
  return pkr === null || pkr === undefined ? UNKNOWN : grouped.format(pkr);
}

/** A PKR figure for reading: grouped digits, "PKR" after; null is unknown, not zero. */
export function formatPkr(pkr: number | null | undefined): string {
  return pkr === null || pkr === undefined ? UNKNOWN : `${formatPkrFigure(pkr)} PKR`;
}

export function formatMicroPkr(micro: number | null | undefined): string {
  return micro === null || micro === undefined ? UNKNOWN : formatPkr(micro / MICRO_PER_PKR);
}

const fixedFormats = new Map<number, Intl.NumberFormat>();

/**
 * Micro-PKR as a figure with exactly `decimals` decimals (a context's own: two for balances and
 * limits), for columns of figures that line up; an amount too small to show reads "< 0.01"
 * (or "> -0.01"), never 0; null is unknown. The exact amount is `exactPkrTitle`.
 */
export function formatMicroPkrFixed(micro: number | null | undefined, decimals = 2): string {
  if (micro === null || micro === undefined) return UNKNOWN;
  const smallest = 10 ** -decimals;
  if (micro > 0 && micro / MICRO_PER_PKR < smallest / 2) return `< ${smallest.toFixed(decimals)}`;
  if (micro < 0 && micro / MICRO_PER_PKR > -smallest / 2) return `> -${smallest.toFixed(decimals)}`;
  let format = fixedFormats.get(decimals);
  if (!format) {
    format = new Intl.NumberFormat(undefined, { minimumFractionDigits: decimals, maximumFractionDigits: decimals });
    fixedFormats.set(decimals, format);
  }
  return format.format(micro / MICRO_PER_PKR);
}

// One formatter for every tooltip: toLocaleString builds a new one per call, which a table of
// amounts pays for each cell it draws.
const microDigits = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });

/** The exact amount for a tooltip: every settled decimal, and the micro-PKR the server counts. */
export function exactPkrTitle(micro: number): string {
  const whole = Math.round(micro);
  return `${microToPkrText(whole)} PKR (${microDigits.format(whole)} micro-PKR)${whole === micro ? '' : ', rounded'}`;
}
