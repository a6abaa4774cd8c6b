import { useMemo } from 'react';
import { errorMessage } from '../../bridge.js';
import { Empty, ErrorNote, Loading } from '../../components/Feedback.js';
import { Field } from '../../components/Field.js';
import { formatCount, formatDecimal, formatMs } from '../../lib/format.js';
import {
  GROUP_BYS,
  METRICS,
  downsample,
  durationMs,
  durationText,
  fillGaps,
  seriesName,
  type GroupBy,
  type Metric,
  type SeriesTable,
} from '../../lib/timeseries.js';
import { useDirectory } from '../../state/directory.js';
import { useRoute } from '../../state/route.js';
import { useAnalytics, type SeriesAnswer } from './analytics-store.js';
import { INTERVAL_CHOICES, PARAM, intervalFits, type AnalyticsView } from './analytics-view.js';
import { PALETTE, SeriesChart, plotPixels, type NamedSeries } from './SeriesChart.js';
import { useElementWidth } from './useElementWidth.js';

export const METRIC_LABELS: Record<Metric, string> = {
  volume: 'Requests',
  latency: 'Mean latency',
  ttft: 'Mean time to first token',
  tok_s: 'Tokens per second',
  token_usage: 'Tokens',
};

const GROUP_LABELS: Record<GroupBy, string> = { project: 'Project', key: 'Key', model: 'Model' };

/** A value in the metric's unit; a combined count is a mean, so it may have a decimal. */
function valueFormat(metric: Metric, combined: boolean): (value: number | null) => string {
  switch (metric) {
    case 'latency':
    case 'ttft':
      return formatMs;
    case 'tok_s':
      return (value) => formatDecimal(value, ' tok/s');
    default:
      return combined ? (value) => formatDecimal(value) : formatCount;
  }
}

const compact = new Intl.NumberFormat(undefined, { notation: 'compact', maximumFractionDigits: 1 });

/** Axis ticks: durations in ms or s (not "15K" ms), other figures compact. */
function tickFormat(metric: Metric): (value: number) => string {
  if (metric === 'latency' || metric === 'ttft') {
    return (value) => (value >= 1000 ? `${compact.format(value / 1000)} s` : `${compact.format(value)} ms`);
  }
  return (value) => compact.format(value);
}

interface Prepared {
  table: SeriesTable;
  names: NamedSeries[];
  metric: Metric;
  groupBy: GroupBy | null;
  interval: string;
  intervalMs: number;
}

/** Fills the answer's gaps and names its series, ordered by name (rows without a group last). */
function prepare(
  answer: SeriesAnswer,
  nameOf: (groupBy: GroupBy, id: string) => string | null,
): Prepared | { error: string } {
  const { response, fromMs, toMs } = answer;
  const metric = (METRICS as readonly string[]).includes(response.metric) ? (response.metric as Metric) : null;
  if (!metric) return { error: `the server answered an unknown metric, ${response.metric}` };
  const groupBy = (GROUP_BYS as readonly string[]).includes(response.group_by ?? '')
    ? (response.group_by as GroupBy)
    : null;
  const intervalMs = durationMs(response.interval);
  if (intervalMs === null) return { error: `the server answered an interval that does not read, ${response.interval}` };
  let filled: SeriesTable;
  try {
    filled = fillGaps(response.data, { metric, intervalMs, fromMs, toMs, grouped: groupBy !== null });
  } catch (error) {
    return { error: errorMessage(error) };
  }
  const named = filled.series
    .map((series) => ({
      series,
      name: seriesName(groupBy, series.group, (id) => (groupBy ? nameOf(groupBy, id) : null), METRIC_LABELS[metric]),
    }))
    .sort((a, b) =>
      a.series.group === null || b.series.group === null
        ? Number(a.series.group === null) - Number(b.series.group === null)
        : a.name.localeCompare(b.name),
    );
  return {
    table: { ...filled, series: named.map((n) => n.series) },
    names: named.map((n, i) => ({ name: n.name, color: PALETTE[i % PALETTE.length]! })),
    metric,
    groupBy,
    interval: response.interval,
    intervalMs,
  };
}

/** The chart of one metric over the window, its controls, its legend and what it had to combine. */
export function TimeseriesPanel({ view, onRetry }: { view: AnalyticsView; onRetry: () => void }) {
  const setParams = useRoute((s) => s.setParams);
  const { data, query: answered, loading, error, unavailable } = useAnalytics((s) => s.series);
  const projects = useDirectory((s) => s.projects);
  const keys = useDirectory((s) => s.keys);
  const [measure, width] = useElementWidth<HTMLDivElement>();

  const prepared = useMemo(
    () =>
      data &&
      prepare(data, (groupBy, id) =>
        groupBy === 'project'
          ? (projects?.find((p) => p.id === id)?.name ?? null)
          : groupBy === 'key'
            ? (keys?.find((k) => k.id === id)?.name ?? null)
            : null,
      ),
    [data, projects, keys],
  );
  const ready = prepared && 'table' in prepared ? prepared : null;
  const pixels = plotPixels(width);
  const shown = useMemo(() => (ready && width > 0 ? downsample(ready.table, pixels) : null), [ready, width, pixels]);
  const hasValues = shown?.series.some((s) => s.values.some((v) => v !== null && v !== 0)) ?? false;

  // Once answered, "auto" says which width the server chose.
  const autoLabel = ready && answered && answered.interval === undefined ? `Auto (${ready.interval})` : 'Auto';

  return (
    <section className="panel analytics-series" aria-labelledby="series-heading" aria-busy={loading}>
      <h2 id="series-heading">Over time</h2>
      <div className="toolbar" role="group" aria-label="Chart">
        <Field label="Metric">
          <select
            value={view.metric}
            onChange={(e) => setParams({ [PARAM.metric]: e.target.value })}
            data-testid="series-metric"
          >
            {METRICS.map((metric) => (
              <option key={metric} value={metric}>
                {METRIC_LABELS[metric]}
              </option>
            ))}
          </select>
        </Field>
        <Field label="Interval">
          <select
            value={view.interval ?? ''}
            onChange={(e) => setParams({ [PARAM.interval]: e.target.value })}
            data-testid="series-interval"
          >
            <option value="">{autoLabel}</option>
            {INTERVAL_CHOICES.map((interval) => {
              const fits = intervalFits(interval, view.rangeMs);
              return (
                <option key={interval} value={interval} disabled={!fits}>
                  {fits ? interval : `${interval} (too fine for ${view.range})`}
                </option>
              );
            })}
          </select>
        </Field>
        <Field label="Group by">
          <select
            value={view.groupBy ?? ''}
            onChange={(e) => setParams({ [PARAM.groupBy]: e.target.value })}
            data-testid="series-group-by"
          >
            <option value="">None</option>
            {GROUP_BYS.map((groupBy) => (
              <option key={groupBy} value={groupBy}>
                {GROUP_LABELS[groupBy]}
              </option>
            ))}
          </select>
        </Field>
      </div>

      {unavailable ? (
        <p className="muted" role="status" data-testid="series-unavailable">
          The chart is unavailable while the server cannot read its request telemetry.{' '}
          <button type="button" className="link" onClick={onRetry}>
            Try again
          </button>
        </p>
      ) : (
        <ErrorNote error={error && `Could not load the chart: ${error}`} onRetry={onRetry} testId="series-error" />
      )}
      <ErrorNote error={prepared && 'error' in prepared ? `Could not draw the chart: ${prepared.error}` : null} />

      <figure
        className={loading && data ? 'chart stale' : 'chart'}
        data-testid="series-chart"
        data-state={loading ? 'loading' : error ? 'error' : 'ready'}
        data-points={shown?.times.length ?? 0}
        aria-label={
          ready
            ? `${METRIC_LABELS[ready.metric]} per ${ready.interval}${ready.groupBy ? ` by ${ready.groupBy}` : ''}`
            : 'Chart'
        }
      >
        <div className="chart-area" ref={measure}>
          {loading && !data && <Loading>Loading the chart…</Loading>}
          {ready && shown && width > 0 && (
            <SeriesChart
              width={width}
              table={shown}
              names={ready.names}
              formatValue={valueFormat(ready.metric, shown.perPoint > 1)}
              formatTick={tickFormat(ready.metric)}
              perPoint={shown.perPoint}
              bucketMs={ready.intervalMs}
            />
          )}
        </div>
        {ready && (
          <figcaption className="muted">
            {METRIC_LABELS[ready.metric]} per {ready.interval} bucket
            {ready.groupBy ? `, by ${ready.groupBy}` : ''}. Times in your time zone; the tooltip adds UTC.
            {ready.metric !== 'volume' &&
              ready.metric !== 'token_usage' &&
              ' A break in a line is a bucket without values.'}
          </figcaption>
        )}
      </figure>

      {shown && shown.perPoint > 1 && (
        <p className="muted" data-testid="combined-note">
          {shown.buckets.toLocaleString()} buckets of {durationText(shown.stepMs / shown.perPoint)} are more than the
          chart&apos;s {pixels.toLocaleString()} pixels: each point combines {shown.perPoint} neighbouring buckets (the
          mean of their known values), {shown.times.length.toLocaleString()} points in all.
        </p>
      )}
      {ready && ready.table.series.length === 0 && <Empty>No requests in this window.</Empty>}
      {ready && ready.table.series.length > 0 && shown && !hasValues && !loading && (
        <p className="muted" data-testid="series-empty">
          No {ready.metric === 'volume' ? 'requests' : 'values'} in this window.
        </p>
      )}
      {ready && ready.table.series.length > 0 && (
        <ul className="series-legend" aria-label="Series" data-testid="series-legend">
          {ready.names.map((series, i) => (
            <li key={i} data-testid="series-name">
              <span className="swatch" style={{ background: series.color }} aria-hidden="true" />
              {series.name}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
