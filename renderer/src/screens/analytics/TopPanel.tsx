import { useEffect, useRef } from 'react';
import { DataTable, type Column } from '../../components/DataTable.js';
import { UnavailableNote } from '../../components/Feedback.js';
import { Field } from '../../components/Field.js';
import { Money } from '../../components/Money.js';
import { Sparkline } from '../../components/Sparkline.js';
import { useDocumentVisible, usePolling } from '../../components/usePolling.js';
import { changeText, shareText } from '../../lib/change.js';
import { formatCount, formatMs } from '../../lib/format.js';
import { apiLabel } from '../../lib/request-api.js';
import { mayStand } from '../../lib/revisit.js';
import { useRoute } from '../../state/route.js';
import { summaryQuery, type AnalyticsView } from './analytics-view.js';
import { useAnalytics } from './analytics-store.js';
import { useTop, type Top, type TopQuery } from './top-store.js';

/** As often as the summary and the chart when auto-refresh is on. */
const TOP_REFRESH_MS = 15_000;

type TopGroupBy = 'key' | 'model' | 'project' | 'api';
type TopSort = 'cost' | 'requests';
type Row = Top['groups'][number];

const GROUPS: { value: TopGroupBy; label: string }[] = [
  { value: 'key', label: 'Keys' },
  { value: 'model', label: 'Models' },
  { value: 'project', label: 'Projects' },
  { value: 'api', label: 'APIs' },
];

const COLUMNS: Column[] = [
  { label: 'Name' },
  { label: 'Requests', number: true },
  { label: 'Of requests', number: true },
  { label: 'Spend (PKR)', number: true },
  { label: 'Of spend', number: true },
  { label: 'Spend vs before', number: true },
  { label: '5xx', number: true },
  { label: 'Latency mean · p95', number: true },
  { label: 'Requests over time' },
];

/**
 * The keys, models, projects or gateway APIs that carry the window's traffic and spend, largest
 * first, each beside the same window just before; a click on one narrows the whole screen to it.
 */
export function TopPanel({ view }: { view: AnalyticsView }) {
  const params = useRoute((s) => s.params);
  const setParams = useRoute((s) => s.setParams);
  const { top, loading, error, unavailable, notOffered, load } = useTop();
  const groupBy = (GROUPS.find((g) => g.value === params.top)?.value ?? 'key') satisfies TopGroupBy;
  const sort: TopSort = params.topsort === 'requests' ? 'requests' : 'cost';
  const query = JSON.stringify({ ...summaryQuery(view), group_by: groupBy, sort });
  const askedAt = useRef<number | null>(null);

  useEffect(() => {
    // Asked once the screen's own effects have asked for the figures above it (a child's effects
    // run first): the table is below the window, and the server takes analytics queries in order.
    // A revisit of the same top shows it at once and reads it again in the background.
    let live = true;
    askedAt.current = Date.now();
    queueMicrotask(() => {
      const { query: answered, at } = useTop.getState();
      if (live) void load(JSON.parse(query), mayStand(JSON.stringify(answered), at, query));
    });
    return () => {
      live = false;
    };
  }, [query, load]);
  // With the screen's auto-refresh, in the background like the summary and the chart.
  const autoRefresh = useAnalytics((s) => s.autoRefresh);
  const visible = useDocumentVisible();
  usePolling(() => load(JSON.parse(query) as TopQuery, true), {
    every: TOP_REFRESH_MS,
    active: autoRefresh && visible,
    // Not at once behind the read this panel has just asked for.
    since: () => askedAt.current,
  });

  if (notOffered) return null;
  const total = top?.total;
  const scope = (row: Row) => {
    if (row.group === null) return;
    setParams({ [groupBy]: row.group, ...(groupBy === 'key' ? { project: null } : {}) });
  };
  const label = (row: Row) =>
    row.group === null
      ? groupBy === 'key'
        ? 'No key'
        : groupBy === 'api'
          ? 'API unknown'
          : 'No project'
      : groupBy === 'api'
        ? apiLabel(row.group)
        : (row.name ?? (groupBy === 'model' ? row.group : `Gone (${row.group.slice(0, 8)}…)`));

  return (
    <section className="panel analytics-top" aria-labelledby="top-heading" aria-busy={loading}>
      <h2 id="top-heading">Top</h2>
      <div className="toolbar" role="group" aria-label="Top">
        <Field label="Of">
          <select
            value={groupBy}
            onChange={(e) => setParams({ top: e.target.value === 'key' ? null : e.target.value })}
            data-testid="top-group"
          >
            {GROUPS.map((g) => (
              <option key={g.value} value={g.value}>
                {g.label}
              </option>
            ))}
          </select>
        </Field>
        <Field label="By">
          <select
            value={sort}
            onChange={(e) => setParams({ topsort: e.target.value === 'cost' ? null : e.target.value })}
            data-testid="top-sort"
          >
            <option value="cost">Spend</option>
            <option value="requests">Requests</option>
          </select>
        </Field>
      </div>
      <p className="muted top-hint">
        “Before” is the window of the same length just before this one. A name narrows the whole screen to it.
      </p>
      {unavailable && <UnavailableNote subject="Figures are" testId="top-unavailable" />}
      <DataTable
        testId="top-table"
        label={`Top ${groupBy === 'api' ? 'APIs' : `${groupBy}s`}`}
        columns={COLUMNS}
        rows={top ? top.groups : unavailable ? [] : null}
        rowKey={(row) => String(row.group)}
        loading="Loading the top of the window…"
        error={error && `Could not load the top: ${error}`}
        onRetry={() => void load(JSON.parse(query))}
        errorTestId="top-error"
        empty="No requests in this window."
        row={(row) => (
          <tr key={String(row.group)} data-testid="top-row" data-group={row.group ?? ''}>
            <td>
              {row.group === null ? (
                <span className="muted">{label(row)}</span>
              ) : (
                <button type="button" className="link" onClick={() => scope(row)} title="Narrow the screen to it">
                  {label(row)}
                </button>
              )}
            </td>
            <td className="number">{formatCount(row.requests)}</td>
            <td className="number">{shareText(row.requests, total?.requests ?? 0)}</td>
            <td className="number">
              <Money micro={row.cost_micro} />
            </td>
            <td className="number">{shareText(row.cost_micro, total?.cost_micro ?? 0)}</td>
            <td className="number" title={`${formatCount(row.previous_requests)} requests before`}>
              {changeText(row.cost_micro, row.previous_cost_micro)}
            </td>
            <td className="number">{shareText(row.errors, row.requests)}</td>
            <td className="number" title="p95 from mergeable sketches, within 1 % of the exact value">
              {formatMs(row.mean_latency_ms)} · {formatMs(row.p95_latency_ms)}
            </td>
            <td>
              {row.trend && (
                <Sparkline
                  values={row.trend}
                  label={`Requests per ${top?.trend_interval ?? 'bucket'} in ${top?.time_zone ?? 'UTC'}: ${trendText(row.trend)}`}
                />
              )}
            </td>
          </tr>
        )}
      />
      {top?.others && (
        <p className="muted" data-testid="top-others">
          {formatCount(top.others.count)} more: {formatCount(top.others.requests)} requests,{' '}
          <Money micro={top.others.cost_micro} unit />.
        </p>
      )}
    </section>
  );
}

/** The trend line in words: first and last bucket, and the largest. */
function trendText(trend: readonly number[]): string {
  if (trend.length === 0) return 'none';
  return `${formatCount(trend[0]!)} first, ${formatCount(trend.at(-1)!)} last, ${formatCount(Math.max(...trend))} at most`;
}
