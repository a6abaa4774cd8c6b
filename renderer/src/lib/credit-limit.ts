import { MICRO_PER_PKR, parsePkr } from './money.js';

/**
 * A key's credit limit as typed in PKR. Empty means no limit. Zero is refused: the server
 * takes at least one micro-PKR at creation, and on edit it would read 0 as "unlimited",
 * which is not what someone typing 0 means.
 */
export type ParsedCreditLimit = { ok: true; micro: number | null } | { ok: false; error: string };

export function parseCreditLimit(text: string): ParsedCreditLimit {
  if (text.trim() === '') return { ok: true, micro: null };
  const parsed = parsePkr(text);
  if (!parsed.ok) {
    // "0.0000001" is a limit below the smallest unit the server counts: say so.
    return parsed.error.includes('decimals')
      ? { ok: false, error: `${parsed.error}: the smallest credit limit is 0.000001 PKR` }
      : parsed;
  }
  if (parsed.micro === 0)
    return { ok: false, error: 'a credit limit must be above 0 PKR; leave it empty for no limit' };
  return parsed;
}

/**
 * PATCH /keys takes plain PKR as a JSON number and rounds it to micro-PKR. An exact micro-PKR
 * integer divided by a million comes back to the same integer after the server's rounding for
 * every amount below 2^51 micro-PKR (over two billion PKR), far above any budget.
 */
export function microToPkrNumber(micro: number): number {
  return micro / MICRO_PER_PKR;
}
