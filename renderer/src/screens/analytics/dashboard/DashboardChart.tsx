import {
  Area,
  Bar,
  CartesianGrid,
  ComposedChart,
  Line,
  Tooltip,
  XAxis,
  YAxis,
  type TooltipContentProps,
} from 'recharts';
import { isolatedDot } from '../isolated-dot.js';
import { memo } from 'react';
import { useElementWidth } from '../useElementWidth.js';
import type { BucketAxis } from './bucket-time.js';
import type { DashboardRow, RowKey } from './dashboard-data.js';

/** A panel's chart: small, with the value axis and margins of the analytics chart. */
export const DASHBOARD_CHART_HEIGHT = 220;
const Y_AXIS_WIDTH = 64;
const MARGIN = { top: 8, right: 16, bottom: 4, left: 0 };

export interface ChartSeries {
  key: RowKey;
  name: string;
  /** A palette colour (a CSS value, themed where it is a variable). */
  color: string;
  /** A dashed line (the same percentile of another measure). */
  dashed?: boolean;
}

/**
 * One panel's chart over the dashboard's buckets: stacked bars, stacked areas or lines, on the
 * time axis all panels share (bucket index, named in the reporting zone), with its legend.
 * A null is unknown: a gap in a line or an area (never drawn as 0).
 */
export const DashboardChart = memo(function DashboardChart(props: {
  kind: 'bars' | 'areas' | 'lines';
  rows: readonly DashboardRow[];
  series: readonly ChartSeries[];
  axis: BucketAxis;
  /** A value in the panel's unit, for the tooltip ("1,204 ms"); null is unknown. */
  formatValue: (value: number | null) => string;
  /** A tick of the value axis, short ("1.2 s", "15K"). */
  formatTick: (value: number) => string;
  /** What the chart shows, for screen readers ("Requests by outcome, 24 buckets"). */
  label: string;
  testId: string;
}) {
  const { kind, rows, series, axis, formatValue } = props;
  const [measure, width] = useElementWidth<HTMLDivElement>();
  const stacked = kind !== 'lines';

  const tooltip = ({ active, label }: TooltipContentProps) => {
    const index = Number(label);
    const row = active && Number.isInteger(index) ? rows[index] : undefined;
    if (!row) return null;
    return (
      <div className="chart-tooltip" data-testid="dashboard-tooltip">
        <strong>{axis.title(index)}</strong>
        <ul>
          {series.map((s) => (
            <li key={s.key}>
              <span className="swatch" style={{ background: s.color }} aria-hidden="true" />
              {s.name}: <strong>{formatValue(row[s.key])}</strong>
            </li>
          ))}
        </ul>
      </div>
    );
  };

  return (
    <figure className="dashboard-chart" aria-label={props.label} data-testid={props.testId} data-points={rows.length}>
      <div className="dashboard-chart-area" ref={measure}>
        {width > 0 && (
          <ComposedChart width={width} height={DASHBOARD_CHART_HEIGHT} data={rows as DashboardRow[]} margin={MARGIN}>
            <CartesianGrid strokeDasharray="3 3" stroke="currentColor" strokeOpacity={0.15} vertical={false} />
            <XAxis
              dataKey="i"
              type="category"
              tickFormatter={(value: number) => axis.tick(value)}
              stroke="currentColor"
              minTickGap={24}
            />
            <YAxis width={Y_AXIS_WIDTH} stroke="currentColor" tickFormatter={props.formatTick} />
            <Tooltip content={tooltip} isAnimationActive={false} />
            {series.map((s) =>
              kind === 'bars' ? (
                <Bar
                  key={s.key}
                  dataKey={s.key}
                  name={s.name}
                  fill={s.color}
                  stackId={stacked ? 'stack' : undefined}
                  isAnimationActive={false}
                />
              ) : kind === 'areas' ? (
                <Area
                  key={s.key}
                  dataKey={s.key}
                  name={s.name}
                  stroke={s.color}
                  fill={s.color}
                  fillOpacity={0.45}
                  type="linear"
                  stackId="stack"
                  // In a stack a null would count as 0; not connecting makes it a gap instead.
                  connectNulls={false}
                  isAnimationActive={false}
                />
              ) : (
                <Line
                  key={s.key}
                  dataKey={s.key}
                  name={s.name}
                  stroke={s.color}
                  strokeWidth={1.5}
                  strokeDasharray={s.dashed ? '5 3' : undefined}
                  type="linear"
                  // Unknown breaks the line: joining across it would draw a value nobody measured.
                  connectNulls={false}
                  dot={isolatedDot(rows.length, (i) => rows[i] !== undefined && rows[i][s.key] !== null, s.color)}
                  isAnimationActive={false}
                />
              ),
            )}
          </ComposedChart>
        )}
      </div>
      <ul className="series-legend dashboard-legend" aria-label="Legend">
        {series.map((s) => (
          <li key={s.key}>
            <span
              className={s.dashed ? 'swatch swatch-dashed' : 'swatch'}
              style={s.dashed ? { borderColor: s.color } : { background: s.color }}
              aria-hidden="true"
            />
            {s.name}
          </li>
        ))}
      </ul>
    </figure>
  );
});
