export const MICRO_PER_PKR = 1_000_000;

/** Plain PKR to micro-PKR, rounded to the nearest unit. */
export function pkrToMicro(pkr: number): number {
  return Math.round(pkr * MICRO_PER_PKR);
}

export function microToPkr(micro: number): number {
  return micro / MICRO_PER_PKR;
}

/**
 * A micro-PKR amount as PKR with at least two decimals and as many more as it needs,
 * so a message never rounds two different figures to the same text: 5 → "5.00",
 * 12345678 → "12.345678".
 */
export function formatPkr(micro: number): string {
  const sign = micro < 0 ? '-' : '';
  const abs = Math.abs(micro);
  const whole = Math.floor(abs / MICRO_PER_PKR);
  const fraction = String(abs % MICRO_PER_PKR)
    .padStart(6, '0')
    .replace(/0{1,4}$/, '');
  return `${sign}${whole}.${fraction.padEnd(2, '0')}`;
}

/**
 * The smallest micro-PKR amount whose PKR value is at least `pkr`, so that
 * `cost_micro >= it` selects exactly the rows with `cost_pkr >= pkr`.
 */
export function microAtLeast(pkr: number): number {
  let micro = Math.ceil(pkr * MICRO_PER_PKR);
  // Past 2^52 neighbouring amounts are no longer distinct doubles and the search below
  // would never end; no settled cost comes near there, so the product is bound enough.
  if (!(micro < 2 ** 52)) return micro;
  while (microToPkr(micro - 1) >= pkr) micro--;
  while (microToPkr(micro) < pkr) micro++;
  return micro;
}
