import { useMemo } from 'react';
import { Empty, ErrorNote, Loading, UnavailableNote } from '../../components/Feedback.js';
import { Field } from '../../components/Field.js';
import { METRIC_LABELS, axisNote, tickFormat, valueFormat } from '../../lib/chart-format.js';
import { fillAnswer, nameSeries, seriesNames } from '../../lib/series-prepare.js';
import { durationText } from '../../lib/time-range.js';
import { GROUP_BYS, METRICS, downsample, type GroupBy } from '../../lib/timeseries.js';
import { keyName, projectName, useDirectory } from '../../state/directory.js';
import { useRoute } from '../../state/route.js';
import { useAnalytics } from './analytics-store.js';
import { INTERVAL_CHOICES, PARAM, intervalFits, type AnalyticsView } from './analytics-view.js';
import { plotPixels } from './chart-size.js';
import { useSeriesChart } from './series-chart-module.js';
import { useElementWidth } from './useElementWidth.js';
import { useUnchanged } from './useUnchanged.js';

const GROUP_LABELS: Record<GroupBy, string> = { project: 'Project', key: 'Key', model: 'Model', api: 'API' };
/** A grouping in a sentence: "by model", "by API". */
const GROUP_NOUNS: Record<GroupBy, string> = { project: 'project', key: 'key', model: 'model', api: 'API' };

/** The chart of one metric over the window, its controls, its legend and what it had to combine. */
export function TimeseriesPanel({ view, onRetry }: { view: AnalyticsView; onRetry: () => void }) {
  const setParams = useRoute((s) => s.setParams);
  const { data, query: answered, loading, error, unavailable } = useAnalytics((s) => s.series);
  const projects = useDirectory((s) => s.projects);
  const keys = useDirectory((s) => s.keys);
  const [measure, width] = useElementWidth<HTMLDivElement>();

  // Filling reads the answer alone; naming reads the names of the groups it holds. A
  // directory reload that renames none of them leaves both, and the downsampling, as they were.
  const filled = useMemo(() => (data ? fillAnswer(data) : null), [data]);
  const fillError = filled && 'error' in filled ? filled.error : null;
  const answer = filled && !('error' in filled) ? filled : null;
  const namesText = useMemo(
    () =>
      JSON.stringify(
        answer
          ? seriesNames(answer, (groupBy, id) =>
              groupBy === 'project' ? projectName(projects, id) : groupBy === 'key' ? keyName(keys, id) : null,
            )
          : [],
      ),
    [answer, projects, keys],
  );
  const ready = useMemo(() => answer && nameSeries(answer, JSON.parse(namesText) as string[]), [answer, namesText]);
  const pixels = plotPixels(width);
  const shown = useUnchanged(
    useMemo(() => (ready && width > 0 ? downsample(ready.table, pixels) : null), [ready, width, pixels]),
  );
  const names = useUnchanged(ready?.names);
  // Stable between renders, so the memoised chart is not drawn again for a load starting or ending.
  const metric = ready?.metric ?? view.metric;
  const combined = (shown?.perPoint ?? 1) > 1;
  const formatValue = useMemo(() => valueFormat(metric, combined), [metric, combined]);
  const formatTick = useMemo(() => tickFormat(metric), [metric]);
  const hasValues = shown?.series.some((s) => s.values.some((v) => v !== null && v !== 0)) ?? false;
  const chart = useSeriesChart(Boolean(ready && shown && width > 0));
  const { SeriesChart } = chart;

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
        <UnavailableNote subject="The chart is" onRetry={onRetry} testId="series-unavailable" />
      ) : (
        <ErrorNote error={error && `Could not load the chart: ${error}`} onRetry={onRetry} testId="series-error" />
      )}
      <ErrorNote error={fillError && `Could not draw the chart: ${fillError}`} />
      <ErrorNote
        error={chart.failed ? 'Could not load the chart.' : null}
        onRetry={chart.retry}
        testId="chart-load-error"
      />

      <figure
        className={loading && data ? 'chart stale' : 'chart'}
        data-testid="series-chart"
        data-state={loading ? 'loading' : error ? 'error' : 'ready'}
        data-points={shown?.times.length ?? 0}
        aria-label={
          ready
            ? `${METRIC_LABELS[ready.metric]} per ${ready.interval}${ready.groupBy ? ` by ${GROUP_NOUNS[ready.groupBy]}` : ''}`
            : 'Chart'
        }
      >
        <div className="chart-area" ref={measure}>
          {loading && !data && <Loading>Loading the chart…</Loading>}
          {ready && shown && width > 0 && SeriesChart && (
            <SeriesChart
              width={width}
              table={shown}
              names={names ?? ready.names}
              formatValue={formatValue}
              formatTick={formatTick}
              perPoint={shown.perPoint}
              bucketMs={ready.intervalMs}
            />
          )}
        </div>
        {ready && (
          <figcaption className="muted">
            {METRIC_LABELS[ready.metric]} per {ready.interval} bucket
            {ready.groupBy ? `, by ${GROUP_NOUNS[ready.groupBy]}` : ''}. {axisNote(ready.intervalMs)}
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
