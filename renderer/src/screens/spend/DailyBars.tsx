import { formatMicroPkrFixed } from '../../lib/money.js';

/**
 * The spend of each day of the window as small bars, oldest on the left, scaled to the
 * busiest day; named for screen readers with every day's figure.
 */
export function DailyBars({ daily, testId }: { daily: readonly number[]; testId?: string }) {
  const most = Math.max(...daily, 1);
  const width = 8;
  const gap = 3;
  const height = 24;
  const label = `Spend a day, oldest first: ${daily.map((micro) => `${formatMicroPkrFixed(micro)} PKR`).join(', ')}`;
  return (
    <svg
      className="daily-bars"
      role="img"
      aria-label={label}
      width={daily.length * (width + gap) - gap}
      height={height}
      data-testid={testId}
    >
      <title>{label}</title>
      {daily.map((micro, index) => {
        // A day with any spend shows at least a sliver: it is not a day of none.
        const bar = micro > 0 ? Math.max(2, Math.round((micro / most) * height)) : 0;
        return <rect key={index} x={index * (width + gap)} y={height - bar} width={width} height={bar} rx={1} />;
      })}
      <line x1={0} x2={daily.length * (width + gap) - gap} y1={height - 0.5} y2={height - 0.5} />
    </svg>
  );
}
