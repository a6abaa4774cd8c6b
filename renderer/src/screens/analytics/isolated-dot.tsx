import type { DotItemDotProps } from 'recharts';

/**
 * A known value between two unknowns has no line to sit on: it gets a dot, so it is not lost.
 * A line without such a value draws no dots at all (`false`): recharts would otherwise render
 * an element per point of every line, most of a chart's drawing time.
 */
export function isolatedDot(count: number, known: (index: number) => boolean, color: string | undefined) {
  const alone = (i: number) => known(i) && !known(i - 1) && !known(i + 1);
  if (!Array.from({ length: count }, (_, i) => alone(i)).some(Boolean)) return false;
  return function Dot(dot: DotItemDotProps) {
    const { index, cx, cy } = dot;
    if (!alone(index) || cx === undefined || cy === undefined) return <g key={index} />;
    return <circle key={index} cx={cx} cy={cy} r={2.5} fill={color} stroke="none" />;
  };
}
