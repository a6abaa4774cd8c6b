import { memo, useMemo, type ReactNode } from 'react';
import { DataTable, type Column } from '../../../components/DataTable.js';
import { Empty, ErrorNote, Loading, UnavailableNote } from '../../../components/Feedback.js';
import { Money } from '../../../components/Money.js';
import { UNKNOWN, formatCount, formatDecimal, formatMs } from '../../../lib/format.js';
import { MICRO_PER_PKR, formatMicroPkrFixed } from '../../../lib/money.js';
import { PALETTE } from '../../../lib/series-prepare.js';
import { bucketAxis } from './bucket-time.js';
import {
  anyKnown,
  cacheRows,
  dashboardRows,
  errorBoundText,
  hasRequests,
  percentText,
  total,
  type CacheRow,
  versusBefore,
  type DashboardRow,
} from './dashboard-data.js';
import { DashboardChart, type ChartSeries } from './DashboardChart.js';
import { useDashboard, type Dashboard } from './dashboard-store.js';
import { useUnchanged } from '../useUnchanged.js';

/**
 * The dashboard's panels (GET /analytics/dashboard, beyond the contract), between the summary
 * cards and the contract's chart: requests by outcome, spend, latency percentiles, tokens by
 * kind, tokens per second and the prompt cache by model, on one time axis in the
 * organisation's reporting zone. A control plane without the endpoint shows none of it.
 */

const compact = new Intl.NumberFormat(undefined, { notation: 'compact', maximumFractionDigits: 1 });
const countTick = (value: number) => compact.format(value);
const significant = new Intl.NumberFormat(undefined, { maximumSignificantDigits: 3 });
/** PKR on the value axis: small amounts keep their decimals (0.025, not a row of "0"), large ones compact. */
const pkrTick = (micro: number) => {
  const pkr = micro / MICRO_PER_PKR;
  return Math.abs(pkr) < 1000 ? significant.format(pkr) : compact.format(pkr);
};
const pkrValue = (micro: number | null) => (micro === null ? UNKNOWN : `${formatMicroPkrFixed(micro)} PKR`);
const speedValue = (value: number | null) => formatDecimal(value, ' tok/s');
const msTick = (value: number) => (value >= 1000 ? `${compact.format(value / 1000)} s` : `${compact.format(value)} ms`);

// Outcomes in the theme's own colours (light and dark); several series of one measure in the
// chart palette's, shaded per theme (styles.css).
const OUTCOMES: ChartSeries[] = [
  { key: 'ok', name: '2xx', color: 'var(--ok)' },
  { key: 'clientErrors', name: '4xx', color: 'var(--chart-warning)' },
  { key: 'serverErrors', name: '5xx', color: 'var(--danger)' },
  { key: 'refused', name: 'Refused by gateway', color: 'var(--muted)' },
];
const SPEND: ChartSeries[] = [{ key: 'costMicro', name: 'Spend (PKR)', color: 'var(--accent)' }];
const LATENCY: ChartSeries[] = [
  { key: 'latencyP50', name: 'p50', color: PALETTE[0]! },
  { key: 'latencyP95', name: 'p95', color: PALETTE[1]! },
  { key: 'latencyP99', name: 'p99', color: PALETTE[2]! },
  { key: 'ttftP50', name: 'TTFT p50', color: PALETTE[0]!, dashed: true },
  { key: 'ttftP95', name: 'TTFT p95', color: PALETTE[1]!, dashed: true },
];
// Generated tokens are always known, so they lie at the bottom: an unknown kind above them
// is a gap in its own band and moves no known band.
const TOKENS: ChartSeries[] = [
  { key: 'generated', name: 'Generated', color: PALETTE[1]! },
  { key: 'prompt', name: 'Prompt', color: PALETTE[0]! },
  { key: 'cacheRead', name: 'Cache read', color: PALETTE[3]! },
  { key: 'cacheWrite', name: 'Cache write', color: PALETTE[4]! },
];
const SPEED: ChartSeries[] = [{ key: 'tokensPerSecond', name: 'Tokens per second', color: 'var(--accent)' }];

const NO_REQUESTS = 'No requests in this window';

const CACHE_COLUMNS: Column[] = [
  { label: 'Model' },
  { label: 'Prompt tokens', number: true },
  { label: 'Hit share', number: true },
  { label: 'Saved (PKR)', number: true },
];

export function DashboardGrid({ onRetry }: { onRetry: () => void }) {
  const { data: answer, loading, error, unavailable, notOffered } = useDashboard();
  const data = useUnchanged(answer);
  if (notOffered) return null;
  const first = loading && !data;

  return (
    <section className="dashboard" data-testid="dashboard" aria-labelledby="dashboard-heading" aria-busy={loading}>
      <h2 id="dashboard-heading">Dashboard</h2>
      {first && <Loading>Loading the dashboard…</Loading>}
      {unavailable ? (
        <UnavailableNote subject="The dashboard is" onRetry={onRetry} testId="dashboard-unavailable" />
      ) : (
        <ErrorNote
          error={error && `Could not load the dashboard: ${error}`}
          onRetry={onRetry}
          testId="dashboard-error"
        />
      )}
      {first ? <Skeleton /> : data && <Panels data={data} stale={loading} />}
    </section>
  );
}

/** Before the first answer: the panels' places, so the page does not jump when it arrives. */
function Skeleton() {
  return (
    <div className="dashboard-grid" aria-hidden="true" data-testid="dashboard-skeleton">
      {['outcomes', 'spend', 'latency', 'tokens', 'speed', 'cache'].map((name) => (
        <div key={name} className="panel dashboard-panel">
          <div className="dashboard-skeleton" />
        </div>
      ))}
    </div>
  );
}

/**
 * Drawn again only for another answer or loading state, not whenever the screen renders; the
 * charts (memoised, their props stable) only for another answer.
 */
const Panels = memo(function Panels({ data, stale }: { data: Dashboard; stale: boolean }) {
  // The window's totals move with every answer; its buckets often not: then no chart is redrawn.
  const shownBuckets = useUnchanged(data.buckets);
  const rows = useMemo(() => dashboardRows(shownBuckets), [shownBuckets]);
  const axis = useMemo(
    () =>
      bucketAxis(
        shownBuckets.map((b) => b.start),
        data.interval,
      ),
    [shownBuckets, data.interval],
  );
  const cache = useMemo(() => cacheRows(data.cache), [data.cache]);
  const empty = !hasRequests(shownBuckets);
  const zone = data.time_zone;
  const buckets = `${formatCount(rows.length)} ${rows.length === 1 ? 'bucket' : 'buckets'}`;
  const bound = errorBoundText(data.percentile_relative_error);
  const accuracy = `Percentiles from mergeable sketches, within ${bound} of the exact value`;
  const spent = total(rows, 'costMicro');
  const before = useMemo(() => versusBefore(data.totals), [data.totals]);

  const chart = (
    name: string,
    props: Omit<Parameters<typeof DashboardChart>[0], 'rows' | 'axis' | 'testId'>,
    noValues: string | null = null,
  ): ReactNode =>
    empty ? (
      <Empty>{NO_REQUESTS}</Empty>
    ) : noValues ? (
      <Empty>{noValues}</Empty>
    ) : (
      <DashboardChart {...props} rows={rows} axis={axis} testId={`dashboard-chart-${name}`} />
    );

  return (
    <div className={stale ? 'dashboard-grid stale' : 'dashboard-grid'} data-testid="dashboard-grid">
      <Panel name="outcomes" title="Requests by outcome" zone={zone} versus={before.outcomes}>
        {chart('outcomes', {
          kind: 'bars',
          series: OUTCOMES,
          formatValue: formatCount,
          formatTick: countTick,
          label: `Requests by outcome, ${buckets}: ${said(rows, OUTCOMES)}`,
        })}
      </Panel>

      <Panel name="spend" title="Spend over time" zone={zone} versus={before.spend}>
        {!empty && (
          <p className="dashboard-total" data-testid="dashboard-spend-total">
            <span className="muted">In this window </span>
            <Money micro={spent} unit />
          </p>
        )}
        {chart('spend', {
          kind: 'bars',
          series: SPEND,
          formatValue: pkrValue,
          formatTick: pkrTick,
          label: `Spend over time, ${buckets}: ${formatMicroPkrFixed(spent)} PKR in all`,
        })}
      </Panel>

      <Panel name="latency" title="Latency percentiles" help={accuracy} zone={zone} versus={before.latency}>
        {chart(
          'latency',
          {
            kind: 'lines',
            series: LATENCY,
            formatValue: formatMs,
            formatTick: msTick,
            label: `Latency percentiles, end to end and to the first token, ${buckets}, within ${bound} of the exact values`,
          },
          anyKnown(rows, ['latencyP50', 'ttftP50']) ? null : 'No latencies in this window',
        )}
      </Panel>

      <Panel name="tokens" title="Tokens by kind" zone={zone} versus={before.tokens}>
        {chart('tokens', {
          kind: 'areas',
          series: TOKENS,
          formatValue: formatCount,
          formatTick: countTick,
          label: `Tokens by kind, ${buckets}: ${said(rows, TOKENS)}`,
        })}
      </Panel>

      <Panel name="speed" title="Tokens per second" zone={zone} versus={before.speed}>
        {chart(
          'speed',
          {
            kind: 'lines',
            series: SPEED,
            formatValue: speedValue,
            formatTick: countTick,
            label: `Tokens per second, ${buckets}`,
          },
          anyKnown(rows, ['tokensPerSecond']) ? null : 'No generation speeds in this window',
        )}
      </Panel>

      <Panel name="cache" title="Prompt cache by model" wide>
        {empty ? <Empty>{NO_REQUESTS}</Empty> : <CacheTable rows={cache} />}
      </Panel>
    </div>
  );
});

/** A titled card of the grid (`wide`: across its columns); a chart's says which zone its times are in. */
function Panel(props: {
  name: string;
  title: string;
  help?: string;
  zone?: string;
  /** The panel's figure over the whole window against the window just before. */
  versus?: string;
  wide?: boolean;
  children: ReactNode;
}) {
  const heading = `dashboard-${props.name}-heading`;
  return (
    <section
      className={props.wide ? 'panel dashboard-panel wide' : 'panel dashboard-panel'}
      aria-labelledby={heading}
      data-testid={`dashboard-panel-${props.name}`}
    >
      <h3 id={heading} title={props.help} data-testid={`dashboard-${props.name}-title`}>
        {props.title}
        {props.help && (
          <span className="dashboard-help muted" aria-hidden="true">
            {' '}
            ⓘ
          </span>
        )}
      </h3>
      {props.zone && (
        <p className="muted dashboard-zone" data-testid="dashboard-zone">
          Times in {props.zone}
        </p>
      )}
      {props.versus && (
        <p className="dashboard-versus" data-testid={`dashboard-${props.name}-versus`}>
          {props.versus}
        </p>
      )}
      {props.children}
    </section>
  );
}

function CacheTable({ rows }: { rows: readonly CacheRow[] }) {
  return (
    <DataTable
      testId="dashboard-cache-table"
      labelledBy="dashboard-cache-heading"
      caption="Prompt tokens, the share read from the cache, and what those reads saved, most saved first"
      columns={CACHE_COLUMNS}
      rows={rows}
      rowKey={(row) => row.model}
      empty="No prompt tokens in this window"
      row={(row) => (
        <tr key={row.model} data-testid="cache-row" data-model={row.model}>
          <td>{row.model}</td>
          <td className="number">{formatCount(row.prompt_tokens)}</td>
          <td className={row.hit_share === null ? 'number muted' : 'number'}>
            {percentText(row.hit_share) ?? UNKNOWN}
          </td>
          <td className="number">
            <Money micro={row.saved_micro} />
          </td>
        </tr>
      )}
    />
  );
}

/** The window's total of each series, for a chart's label: "1,200 2xx, 3 4xx, …"; unknown is "–". */
function said(rows: readonly DashboardRow[], series: readonly ChartSeries[]): string {
  return series
    .map((s) => `${formatCount(total(rows, s.key))} ${s.name.replace(/^[A-Z](?=[a-z])/, (c) => c.toLowerCase())}`)
    .join(', ');
}
