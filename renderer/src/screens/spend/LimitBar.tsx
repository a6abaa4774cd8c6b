import { formatMicroPkrFixed } from '../../lib/money.js';

/**
 * A key's settled spend against its credit limit, as a bar on a scale of percent; past the
 * limit it shows full and says by how much. A limit of nil is spent from the start.
 */
export function LimitBar({ name, spent, limit }: { name: string; spent: number; limit: number }) {
  const share = limit > 0 ? spent / limit : 1;
  const percent = Math.round(share * 100);
  const text = `${formatMicroPkrFixed(spent)} of ${formatMicroPkrFixed(limit)} PKR (${percent} %)`;
  const tone = share >= 1 ? 'over' : share >= 0.8 ? 'near' : 'under';
  return (
    <div
      className={`limit-bar ${tone}`}
      role="meter"
      aria-label={`${name}: share of the credit limit spent`}
      aria-valuemin={0}
      aria-valuemax={100}
      aria-valuenow={Math.min(100, Math.max(0, percent))}
      aria-valuetext={text}
      title={text}
      data-testid="limit-bar"
    >
      <span style={{ width: `${Math.min(100, Math.max(0, share * 100))}%` }} />
    </div>
  );
}
