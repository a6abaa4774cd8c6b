/**
 * A small trend line of counts, drawn to the cell's size: the shape of a series at a glance
 * beside its figures (Tufte's word-sized graphic). Its label says what the eye reads from it.
 */
const WIDTH = 96;
const HEIGHT = 20;

export function Sparkline({ values, label }: { values: readonly number[]; label: string }) {
  const top = Math.max(1, ...values);
  const step = values.length > 1 ? WIDTH / (values.length - 1) : 0;
  const points = values
    .map((value, i) => `${(i * step).toFixed(1)},${(HEIGHT - 1 - (value / top) * (HEIGHT - 2)).toFixed(1)}`)
    .join(' ');
  return (
    <svg
      className="sparkline"
      width={WIDTH}
      height={HEIGHT}
      viewBox={`0 0 ${WIDTH} ${HEIGHT}`}
      role="img"
      aria-label={label}
      data-points={values.length}
    >
      <polyline points={points} fill="none" stroke="currentColor" strokeWidth={1.5} strokeLinejoin="round" />
    </svg>
  );
}
