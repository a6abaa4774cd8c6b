import { formatBoundedCount, UNKNOWN } from '../../lib/format.js';
import { MICRO_PER_PKR } from '../../lib/money.js';

/**
 * The request log's figures, bounded so that each column reads whole whatever a row holds:
 * imported rows may carry any count or cost, and the columns are sized for the widest text
 * these can produce (test/e2e/layout.spec.ts puts each in a row).
 */

// The table's times leave out the year to fit the column; the tooltip gives the exact UTC instant.
const rowTime = new Intl.DateTimeFormat(undefined, {
  month: 'short',
  day: 'numeric',
  hour: '2-digit',
  minute: '2-digit',
  second: '2-digit',
});

/** A row's time for the column; a timestamp that does not read is shown as the server sent it. */
export function rowTimeText(iso: string): string {
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : rowTime.format(date);
}

/** A row's tokens: exact below a million, compact above; "≈" when the gateway estimated them. */
export function rowTokensText(tokens: number | null, estimated: boolean): string {
  if (tokens === null) return UNKNOWN;
  return `${estimated ? '≈ ' : ''}${formatBoundedCount(tokens)}`;
}

/**
 * Decimals for a row's cost: four down the column, none from 100,000 PKR, where four would not
 * fit: a cost never needs more than eleven characters ("99,999.9999").
 */
export function rowCostDecimals(micro: number): number {
  return Math.abs(micro) / MICRO_PER_PKR < 99_999.99995 ? 4 : 0;
}

const compactPkr = new Intl.NumberFormat(undefined, { notation: 'compact', maximumFractionDigits: 1 });

/** From ten million PKR a cost reads compact ("12.3M"), its exact figure on hover; null below. */
export function rowCompactCost(micro: number): string | null {
  return Math.abs(micro) / MICRO_PER_PKR < 10_000_000 ? null : compactPkr.format(micro / MICRO_PER_PKR);
}
