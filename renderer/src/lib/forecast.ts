import type { CallResult } from '#contract';
import { formatDate } from './format.js';
import { formatMicroPkrFixed } from './money.js';

/** What a spend forecast says, in words: a headline for the table and the range behind it. */

export type Forecast = NonNullable<CallResult<'api.spend'>['keys'][number]['forecast']>;

const DAY_MS = 86_400_000;

/** "in 12 days", "today", "in 3 hours" from `now` to `iso`. */
export function fromNow(iso: string, now: number): string {
  const ms = new Date(iso).getTime() - now;
  if (ms < DAY_MS) {
    const hours = Math.max(0, Math.round(ms / 3_600_000));
    return hours <= 1 ? 'within the hour' : `in ${hours} hours`;
  }
  const days = Math.round(ms / DAY_MS);
  return `in ${days.toLocaleString()} day${days === 1 ? '' : 's'}`;
}

export interface ForecastText {
  headline: string;
  detail: string;
  /** How soon: drives the colour (a limit used up or running out within a week is urgent). */
  tone: 'urgent' | 'soon' | 'calm';
}

export function forecastText(forecast: Forecast, now: number): ForecastText {
  const pkr = (micro: number) => `${formatMicroPkrFixed(micro)} PKR`;
  switch (forecast.kind) {
    case 'spent':
      return {
        headline: 'Used up',
        detail: forecast.remaining_micro < 0 ? `${pkr(-forecast.remaining_micro)} past it` : 'nothing remains',
        tone: 'urgent',
      };
    case 'idle':
      return {
        headline: 'No spend in 7 days',
        detail: `${pkr(forecast.remaining_micro)} remains; no date at a rate of nil`,
        tone: 'calm',
      };
    case 'beyond':
      return {
        headline: `Lasts beyond ${Math.round(forecast.days / 365)} years`,
        detail: `${pkr(forecast.remaining_micro)} remains at a slow rate`,
        tone: 'calm',
      };
    case 'runs_out': {
      const days = (new Date(forecast.at).getTime() - now) / DAY_MS;
      const latest = forecast.latest === null ? 'not at all at the slowest likely rate' : formatDate(forecast.latest);
      return {
        headline: `Runs out ${formatDate(forecast.at)} (${fromNow(forecast.at, now)})`,
        detail: `likely between ${formatDate(forecast.earliest)} and ${latest}`,
        tone: days <= 7 ? 'urgent' : days <= 30 ? 'soon' : 'calm',
      };
    }
    case 'projected':
      if (forecast.amount_micro === 0)
        return { headline: 'No spend in 7 days', detail: 'no limit; nothing projected', tone: 'calm' };
      return {
        headline: `${pkr(forecast.amount_micro)} in ${forecast.days} days`,
        detail: `no limit; likely ${formatMicroPkrFixed(forecast.low_micro)}–${pkr(forecast.high_micro)}`,
        tone: 'calm',
      };
  }
}

/** How every forecast on the screen is made, said once beside them. */
export const FORECAST_METHOD =
  'Rate: the mean spend a day over the last 7 days (24-hour days ending now), from the request log. ' +
  'Range: the 90 % interval of that mean (Student’s t, 6 degrees of freedom), so steady spend gives a ' +
  'narrow range and bursty spend a wide one. A date is what remains (the limit less the settled spend) ' +
  'over the rate; keys without a limit show the spend of the next 30 days at it.';
