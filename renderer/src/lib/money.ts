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

const toPaisa = new Intl.NumberFormat(undefined, { minimumFractionDigits: 2, maximumFractionDigits: 2 });

/**
 * Micro-PKR to the paisa, for reading down a column (the exact figure is `formatMicroPkr`):
 * a trace below one paisa reads "< 0.01 PKR", never 0; null is unknown.
 */
export function formatMicroPkrToPaisa(micro: number | null | undefined): string {
  if (micro === null || micro === undefined) return UNKNOWN;
  if (micro > 0 && micro < MICRO_PER_PKR / 100) return '< 0.01 PKR';
  return `${toPaisa.format(micro / MICRO_PER_PKR)} PKR`;
}
