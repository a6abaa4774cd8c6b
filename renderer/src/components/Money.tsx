import { UNKNOWN } from '../lib/format.js';
import { exactPkrTitle, formatMicroPkrFixed } from '../lib/money.js';

/**
 * An amount of PKR on screen: a fixed number of decimals for its context, tabular figures (so
 * columns line up), the exact micro-PKR on hover; unknown is "–", never 0. `unit` adds "PKR".
 */
export function Money({
  micro,
  decimals = 2,
  unit = false,
  testId,
}: {
  micro: number | null | undefined;
  decimals?: number;
  unit?: boolean;
  testId?: string;
}) {
  if (micro === null || micro === undefined) {
    return (
      <span className="money muted" data-testid={testId}>
        {UNKNOWN}
      </span>
    );
  }
  return (
    <span className="money" title={exactPkrTitle(micro)} data-testid={testId} data-micro={Math.round(micro)}>
      {formatMicroPkrFixed(micro, decimals)}
      {unit && ' PKR'}
    </span>
  );
}
