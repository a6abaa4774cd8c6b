/**
 * When a credit limit or the organisation's deposits run out at the recent rate of spend.
 *
 * Method: the spend of the last BURN_DAYS days, each day the 24 hours ending a whole number of
 * days before now (no partial day, whatever the hour), taken as independent draws of one daily
 * rate. The rate is their mean; its uncertainty a 90 % interval of that mean (Student's t with
 * BURN_DAYS - 1 degrees of freedom). A date is the remaining amount over the rate, the range
 * the same over the interval's ends: the fastest plausible rate gives the earliest date, the
 * slowest the latest (none when the slowest plausible rate is nil). Without a limit, the same
 * rate over PROJECTION_DAYS is the projected spend. All amounts are micro-PKR.
 */

export const BURN_DAYS = 7;
export const PROJECTION_DAYS = 30;
/**
 * How far ahead a date is given. A trickle of spend against a large limit would put it in the
 * year 30,000 (past what a date can be written as); beyond this it "lasts beyond" instead.
 */
export const HORIZON_DAYS = 3_650;
const DAY_MS = 86_400_000;
/** Student's t, 95th percentile, 6 degrees of freedom: a two-sided 90 % interval of a mean of 7. */
const T_90 = 1.943;

export interface Burn {
  /** Spend of each day of the window, oldest first. */
  daily: number[];
  /** The window's spend, their sum. */
  total: number;
  /** Mean spend a day, and the 90 % interval of that mean (its low end never below nil). */
  rate: number;
  rateLow: number;
  rateHigh: number;
}

export type Forecast =
  /** Nothing remains: the limit or the deposits are used up (remaining ≤ 0). */
  | { kind: 'spent'; remaining: number }
  /** Something remains, and nothing was spent in the window: no date follows from a nil rate. */
  | { kind: 'idle'; remaining: number }
  /**
   * Runs out at `at`; `earliest`/`latest` from the interval's ends, `latest` null when its slow
   * end is nil or past the horizon.
   */
  | { kind: 'runs_out'; remaining: number; at: number; earliest: number; latest: number | null }
  /** Something remains, and at the rate it lasts past HORIZON_DAYS. */
  | { kind: 'beyond'; remaining: number; days: number }
  /** No limit: the spend of the next PROJECTION_DAYS at the rate (whole micro-PKR), with the interval's ends. */
  | { kind: 'projected'; days: number; amount: number; low: number; high: number };

/** The window's rate from its daily spends (BURN_DAYS of them, oldest first). */
export function burnOf(daily: readonly number[]): Burn {
  if (daily.length !== BURN_DAYS) throw new Error(`a burn takes ${BURN_DAYS} days, not ${daily.length}`);
  const total = daily.reduce((sum, day) => sum + day, 0);
  const rate = total / BURN_DAYS;
  const variance = daily.reduce((sum, day) => sum + (day - rate) ** 2, 0) / (BURN_DAYS - 1);
  const margin = (T_90 * Math.sqrt(variance)) / Math.sqrt(BURN_DAYS);
  return { daily: [...daily], total, rate, rateLow: Math.max(0, rate - margin), rateHigh: rate + margin };
}

/** What `burn` says of `remaining` (null: no limit) as of `now` (epoch ms). */
export function forecastOf(burn: Burn, remaining: number | null, now: number): Forecast {
  if (remaining === null) {
    const days = PROJECTION_DAYS;
    const over = (rate: number) => Math.round(rate * days);
    return { kind: 'projected', days, amount: over(burn.rate), low: over(burn.rateLow), high: over(burn.rateHigh) };
  }
  if (remaining <= 0) return { kind: 'spent', remaining };
  if (burn.rate === 0) return { kind: 'idle', remaining };
  // A date within the horizon, or null past it (a nil rate is past every horizon).
  const after = (rate: number) => {
    const days = rate > 0 ? remaining / rate : Infinity;
    return days <= HORIZON_DAYS ? now + Math.round(days * DAY_MS) : null;
  };
  const at = after(burn.rate);
  if (at === null) return { kind: 'beyond', remaining, days: HORIZON_DAYS };
  // The fast end is at least the rate, so its date comes no later than `at`.
  return { kind: 'runs_out', remaining, at, earliest: after(burn.rateHigh)!, latest: after(burn.rateLow) };
}

/** The window's days as [from, to] in epoch ms, both edges included, oldest first, the last ending at `now`. */
export function burnDays(now: number): { from: number; to: number }[] {
  return Array.from({ length: BURN_DAYS }, (_, i) => {
    const to = now - (BURN_DAYS - 1 - i) * DAY_MS;
    return { from: to - DAY_MS + 1, to };
  });
}

/**
 * How urgent a forecast is, for sorting (smaller first): used up, then the soonest date, then
 * the largest projection, then those that last past the horizon, then idle.
 */
export function urgency(forecast: Forecast | null): [number, number] {
  if (forecast === null) return [5, 0];
  switch (forecast.kind) {
    case 'spent':
      return [0, forecast.remaining];
    case 'runs_out':
      return [1, forecast.at];
    case 'projected':
      return [2, -forecast.amount];
    case 'beyond':
      return [3, 0];
    case 'idle':
      return [4, 0];
  }
}
