import { CartesianGrid, Line, LineChart, Tooltip, XAxis, YAxis, type TooltipContentProps } from 'recharts';
import { isolatedDot } from './isolated-dot.js';
import { memo, useMemo } from 'react';
import { axisTimeFormat, pointTitle } from '../../lib/chart-format.js';
import { utcTitle } from '../../lib/format.js';
import type { NamedSeries } from '../../lib/series-prepare.js';
import { durationText } from '../../lib/time-range.js';
import { chartRows, type SeriesTable } from '../../lib/timeseries.js';
import { CHART_HEIGHT, CHART_MARGIN, Y_AXIS_WIDTH } from './chart-size.js';

/** Memoised: a load starting or ending in the panel around it redraws nothing here. */
export const SeriesChart = memo(function SeriesChart(props: {
  width: number;
  table: SeriesTable;
  names: NamedSeries[];
  /** Reads a value in the metric's unit ("1,204 ms"); null is unknown. */
  formatValue: (value: number | null) => string;
  /** Reads a tick of the value axis, short ("1.2 s", "15K"). */
  formatTick: (value: number) => string;
  /** Buckets combined into each point, for the tooltip. */
  perPoint: number;
  /** The server's bucket width: day-wide buckets are UTC days. */
  bucketMs: number;
}) {
  const { table, names, formatValue } = props;
  const rows = useMemo(() => chartRows(table), [table]);
  const span = (table.times[table.times.length - 1] ?? 0) - (table.times[0] ?? 0);
  const tick = axisTimeFormat(props.bucketMs, span);

  const tooltip = ({ active, label }: TooltipContentProps) => {
    if (!active || typeof label !== 'number') return null;
    const index = table.times.indexOf(label);
    if (index < 0) return null;
    const iso = new Date(label).toISOString();
    return (
      <div className="chart-tooltip" data-testid="chart-tooltip">
        <strong>{pointTitle(props.bucketMs, label)}</strong>
        <span className="muted">{utcTitle(iso)}</span>
        {props.perPoint > 1 && (
          <span className="muted">
            mean of {props.perPoint} buckets of {durationText(props.bucketMs)}
          </span>
        )}
        <ul>
          {table.series.map((series, s) => (
            <li key={s}>
              <span className="swatch" style={{ background: names[s]?.color }} aria-hidden="true" />
              {names[s]?.name}: <strong>{formatValue(series.values[index] ?? null)}</strong>
            </li>
          ))}
        </ul>
      </div>
    );
  };

  return (
    <LineChart width={props.width} height={CHART_HEIGHT} data={rows} margin={CHART_MARGIN}>
      <CartesianGrid strokeDasharray="3 3" stroke="currentColor" strokeOpacity={0.15} />
      <XAxis
        dataKey="t"
        type="number"
        scale="time"
        domain={['dataMin', 'dataMax']}
        tickFormatter={tick}
        stroke="currentColor"
        minTickGap={24}
      />
      <YAxis
        width={Y_AXIS_WIDTH}
        stroke="currentColor"
        tickFormatter={props.formatTick}
        allowDecimals={props.perPoint > 1}
      />
      <Tooltip content={tooltip} isAnimationActive={false} />
      {table.series.map((_, s) => (
        <Line
          key={s}
          dataKey={`s${s}`}
          name={names[s]?.name}
          stroke={names[s]?.color}
          strokeWidth={1.5}
          type="linear"
          // Unknown breaks the line: joining across it would draw a value nobody measured.
          connectNulls={false}
          dot={isolatedDot(
            table.series[s]?.values.length ?? 0,
            (i) => (table.series[s]?.values[i] ?? null) !== null,
            names[s]?.color,
          )}
          isAnimationActive={false}
        />
      ))}
    </LineChart>
  );
});
