import { memo, useMemo, useState, type KeyboardEvent, type PointerEvent } from 'react';
import { useElementWidth } from '../useElementWidth.js';
import type { BucketAxis } from './bucket-time.js';
import { bands, bucketAt, highest, knownRuns, niceTicks, tickEvery, type Band } from './chart-geometry.js';
import type { DashboardRow, RowKey } from './dashboard-data.js';

/** A panel's chart: small, with the value axis and margins of the analytics chart. */
export const DASHBOARD_CHART_HEIGHT = 220;
const Y_AXIS_WIDTH = 64;
const X_AXIS_HEIGHT = 24;
const MARGIN = { top: 8, right: 16, bottom: 4 };
/** A tick's text: 12 px type, about 7 px a character; ticks keep this much space between them. */
const CHAR_PX = 7;
const TICK_GAP_PX = 24;

export interface ChartSeries {
  key: RowKey;
  name: string;
  /** A palette colour (a CSS value, themed where it is a variable). */
  color: string;
  /** A dashed line (the same percentile of another measure). */
  dashed?: boolean;
}

interface ChartProps {
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
}

/**
 * One panel's chart over the dashboard's buckets: stacked bars, stacked areas or lines, on the
 * time axis all panels share (bucket index, named in the reporting zone), with its legend.
 * A null is unknown: a gap in a line or an area (never drawn as 0).
 *
 * Drawn as plain SVG, one path per series: six recharts charts took most of the time to open
 * Analytics (each builds a store of its own and an element per bar), these take a few ms.
 * Hovering, or the arrow keys once the chart has focus, shows a bucket's values.
 */
export const DashboardChart = memo(function DashboardChart(props: ChartProps) {
  const { kind, rows, series } = props;
  const [measure, width] = useElementWidth<HTMLDivElement>();
  const [active, setActive] = useState<number | null>(null);
  const stacked = kind !== 'lines';
  const layout = useMemo(() => {
    const values = series.map((s) => rows.map((row) => row[s.key]));
    const all = bands(values, stacked);
    return { all, ticks: niceTicks(highest(all)) };
  }, [rows, series, stacked]);

  const frame = useMemo(() => chartFrame(width, rows.length), [width, rows.length]);
  const { plot, band, x } = frame;
  const { axis, formatTick } = props;
  // The axes and series are drawn again only for other data or another width: a pointer moving
  // over the chart changes the cursor and the tooltip, not the paths.
  const drawing = useMemo(() => {
    const top = layout.ticks[layout.ticks.length - 1]!;
    const y = (value: number) => frame.plot.bottom - (value / top) * (frame.plot.bottom - frame.plot.top);
    return (
      <>
        <ValueAxis ticks={layout.ticks} y={y} plot={frame.plot} formatTick={formatTick} />
        <TimeAxis count={rows.length} x={frame.x} band={frame.band} plot={frame.plot} axis={axis} />
        {series.map((s, index) => (
          <SeriesShape
            key={s.key}
            kind={kind}
            bands={layout.all[index]!}
            x={frame.x}
            y={y}
            band={frame.band}
            series={s}
          />
        ))}
      </>
    );
  }, [layout, frame, rows.length, series, kind, axis, formatTick]);

  const onPointerMove = (event: PointerEvent<SVGSVGElement>) => {
    const box = event.currentTarget.getBoundingClientRect();
    setActive(bucketAt(event.clientX - box.left - plot.left, band, rows.length));
  };
  const onKeyDown = (event: KeyboardEvent<SVGSVGElement>) => {
    const last = rows.length - 1;
    const moves: Record<string, number> = {
      ArrowLeft: Math.max(0, (active ?? 1) - 1),
      ArrowRight: Math.min(last, (active ?? -1) + 1),
      Home: 0,
      End: last,
    };
    const to = moves[event.key];
    if (to !== undefined && last >= 0) {
      event.preventDefault();
      setActive(to);
    } else if (event.key === 'Escape') setActive(null);
  };

  return (
    <figure className="dashboard-chart" aria-label={props.label} data-testid={props.testId} data-points={rows.length}>
      <div className="dashboard-chart-area" ref={measure}>
        {width > 0 && (
          <svg
            width={width}
            height={DASHBOARD_CHART_HEIGHT}
            className="dashboard-svg"
            role="img"
            aria-label={`${props.label}. Arrow keys read one bucket at a time.`}
            tabIndex={0}
            onPointerMove={onPointerMove}
            onPointerLeave={() => setActive(null)}
            onKeyDown={onKeyDown}
            onBlur={() => setActive(null)}
          >
            {active !== null && (
              <rect
                className="dashboard-cursor"
                x={plot.left + band * active}
                y={plot.top}
                width={band}
                height={plot.bottom - plot.top}
              />
            )}
            {drawing}
          </svg>
        )}
        {active !== null && rows[active] && (
          <Tooltip
            row={rows[active]}
            title={props.axis.title(active)}
            series={series}
            formatValue={props.formatValue}
            // Beside the bucket, on the side with room.
            style={x(active) < width / 2 ? { left: x(active) + 12 } : { right: width - x(active) + 12 }}
          />
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

interface Plot {
  left: number;
  right: number;
  top: number;
  bottom: number;
}

/** The plot's box in a chart `width` wide, each bucket's band across it, and a bucket's centre. */
function chartFrame(width: number, count: number): { plot: Plot; band: number; x: (i: number) => number } {
  const plot = {
    left: Y_AXIS_WIDTH,
    right: Math.max(Y_AXIS_WIDTH + 1, width - MARGIN.right),
    top: MARGIN.top,
    bottom: DASHBOARD_CHART_HEIGHT - MARGIN.bottom - X_AXIS_HEIGHT,
  };
  const band = count > 0 ? (plot.right - plot.left) / count : 0;
  return { plot, band, x: (i) => plot.left + band * (i + 0.5) };
}

function ValueAxis(props: {
  ticks: number[];
  y: (v: number) => number;
  plot: Plot;
  formatTick: (v: number) => string;
}) {
  const { plot, y } = props;
  return (
    <g className="dashboard-axis" aria-hidden="true">
      {props.ticks.map((tick) => (
        <g key={tick}>
          {tick > 0 && (
            <line className="dashboard-grid-line" x1={plot.left} x2={plot.right} y1={y(tick)} y2={y(tick)} />
          )}
          <text x={plot.left - 6} y={y(tick)} dy="0.32em" textAnchor="end">
            {props.formatTick(tick)}
          </text>
        </g>
      ))}
      <line x1={plot.left} x2={plot.left} y1={plot.top} y2={plot.bottom} />
    </g>
  );
}

function TimeAxis(props: { count: number; x: (i: number) => number; band: number; plot: Plot; axis: BucketAxis }) {
  const { count, axis, plot } = props;
  const labels = Array.from({ length: count }, (_, i) => axis.tick(i));
  const widest = labels.reduce((most, label) => Math.max(most, label.length), 0) * CHAR_PX;
  const every = tickEvery(props.band, widest, TICK_GAP_PX);
  return (
    <g className="dashboard-axis" aria-hidden="true">
      <line x1={plot.left} x2={plot.right} y1={plot.bottom} y2={plot.bottom} />
      {labels.map((label, i) =>
        i % every === 0 ? (
          <text key={i} x={props.x(i)} y={plot.bottom + 16} textAnchor="middle">
            {label}
          </text>
        ) : null,
      )}
    </g>
  );
}

/** A series as one path: its bars, its area between the stack below and its top, or its line. */
function SeriesShape(props: {
  kind: ChartProps['kind'];
  bands: readonly Band[];
  x: (i: number) => number;
  y: (v: number) => number;
  band: number;
  series: ChartSeries;
}) {
  const { kind, bands: all, x, y, series } = props;
  if (kind === 'bars') {
    const barWidth = Math.max(1, props.band * 0.8);
    const d = all
      .map((b, i) => {
        if (!b || b.high === b.low) return '';
        const top = y(b.high);
        return `M${x(i) - barWidth / 2},${top}h${barWidth}V${y(b.low)}h${-barWidth}Z`;
      })
      .join('');
    return <path d={d} style={{ fill: series.color }} data-series={series.key} />;
  }
  const runs = knownRuns(all);
  const point = (i: number, value: 'high' | 'low') => `${x(i)},${y(all[i]![value])}`;
  const lone = runs.filter(([first, last]) => first === last).map(([i]) => i);
  const d = runs
    .filter(([first, last]) => first < last)
    .map(([first, last]) => {
      const along = Array.from({ length: last - first + 1 }, (_, k) => point(first + k, 'high')).join('L');
      if (kind === 'lines') return `M${along}`;
      const back = Array.from({ length: last - first + 1 }, (_, k) => point(last - k, 'low')).join('L');
      return `M${along}L${back}Z`;
    })
    .join('');
  return (
    <g data-series={series.key}>
      <path
        d={d}
        className={kind === 'lines' ? 'dashboard-line' : 'dashboard-area'}
        style={kind === 'lines' ? { stroke: series.color } : { stroke: series.color, fill: series.color }}
        strokeDasharray={series.dashed ? '5 3' : undefined}
      />
      {/* A known value between two unknowns has no line to sit on: a dot, so it is not lost. */}
      {lone.map((i) => (
        <circle key={i} cx={x(i)} cy={y(all[i]!.high)} r={2.5} style={{ fill: series.color }} />
      ))}
    </g>
  );
}

function Tooltip(props: {
  row: DashboardRow;
  title: string;
  series: readonly ChartSeries[];
  formatValue: (value: number | null) => string;
  style: { left?: number; right?: number };
}) {
  return (
    <div className="chart-tooltip dashboard-tooltip" data-testid="dashboard-tooltip" style={props.style} role="status">
      <strong>{props.title}</strong>
      <ul>
        {props.series.map((s) => (
          <li key={s.key}>
            <span className="swatch" style={{ background: s.color }} aria-hidden="true" />
            {s.name}: <strong>{props.formatValue(props.row[s.key])}</strong>
          </li>
        ))}
      </ul>
    </div>
  );
}
