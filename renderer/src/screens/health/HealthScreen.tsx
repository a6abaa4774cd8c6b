import { useEffect } from 'react';
import { DataTable, type Column } from '../../components/DataTable.js';
import { Field } from '../../components/Field.js';
import { TargetFilter } from '../../components/filters/TargetFilter.js';
import { TimeBound } from '../../components/filters/TimeBound.js';
import { parseTimeParam } from '../../lib/local-time-input.js';
import { Time } from '../../components/Time.js';
import { useDocumentVisible, usePolling } from '../../components/usePolling.js';
import { dataState } from '../../lib/data-state.js';
import { formatCount, formatDecimal, formatMs } from '../../lib/format.js';
import { mayStand } from '../../lib/revisit.js';
import { useRoute } from '../../state/route.js';
import { cellLogParams, windowLogParams, type HealthSubject } from './health-links.js';
import {
  healthQuery,
  useHealthStore,
  type Health,
  type HealthFigures,
  type HealthStatus,
  type HealthWindow,
  type ModelHealth,
  type ProviderHealth,
} from './health-store.js';
import { STATUS_LABEL, StatusStrip, type StripCell } from './StatusStrip.js';
import './health.css';

/** Live traffic moves the newest cell: re-read this often while the screen is seen. */
const REFRESH_MS = 15_000;

const WINDOWS: { value: HealthWindow; label: string }[] = [
  { value: '1h', label: 'Last hour' },
  { value: '24h', label: 'Last 24 hours' },
];

const COLUMNS: Column[] = [
  { label: 'Provider · model' },
  { label: 'Status' },
  { label: 'Requests', number: true },
  { label: 'Errors', number: true },
  { label: '429 upstream', number: true },
  { label: 'p95', number: true },
  { label: 'p95 first token', number: true },
  { label: 'Last success' },
  { label: 'By 5 minutes' },
];

type Line = { kind: 'provider'; provider: ProviderHealth } | { kind: 'model'; model: ModelHealth };

function linesOf(health: Health): Line[] {
  return health.providers.flatMap((provider): Line[] => [
    { kind: 'provider', provider },
    ...provider.models.map((model): Line => ({ kind: 'model', model })),
  ]);
}

function stripCells(figures: HealthFigures, from: number, cellMs: number): StripCell[] {
  const { strip } = figures;
  return strip.status.map((status, i) => ({
    start: from + i * cellMs,
    requests: strip.requests[i]!,
    errors: strip.errors[i]!,
    upstream429: strip.upstream_429[i]!,
    status,
  }));
}

const providerName = (provider: ProviderHealth) => provider.provider ?? 'Not in the model catalogue';

function StatusBadge({ status }: { status: HealthStatus }) {
  return (
    <span className={`health-status health-${status}`} data-testid="health-status">
      {STATUS_LABEL[status]}
    </span>
  );
}

/** The `to` parameter as the instant sent, or why it cannot be (the window then ends now). */
function endOf(param: string | undefined): { ok: true; iso: string | null } | { ok: false; error: string } {
  if (!param) return { ok: true, iso: null };
  const parsed = parseTimeParam(param);
  if (!parsed.ok) return { ok: false, error: parsed.error };
  // An end not yet reached is the window ending now, and is read again as it moves.
  return { ok: true, iso: parsed.date.getTime() >= Date.now() ? null : parsed.date.toISOString() };
}

/** Each provider's health, then its models', over an hour or a day (ending now or when asked), from the request log itself. */
export function HealthScreen() {
  const params = useRoute((s) => s.params);
  const setParams = useRoute((s) => s.setParams);
  const go = useRoute((s) => s.go);
  const { health, loading, error, notOffered, load } = useHealthStore();
  const visible = useDocumentVisible();
  const window: HealthWindow = params.window === '24h' ? '24h' : '1h';
  const end = endOf(params.to);
  const to = end.ok ? end.iso : null;
  const target = params.target || null;
  // Narrowed to a target, a figure's log is narrowed to it too: the log's rows are the figure's.
  const narrowed = target === null ? {} : { target };

  // A revisit of the same window shows its figures at once and reads them again in the background.
  useEffect(() => {
    const { answered, at } = useHealthStore.getState();
    void load(window, to, target, mayStand(answered, at, JSON.stringify(healthQuery(window, to, target))));
  }, [window, to, target, load]);
  // A window in the past does not move: only the one ending now is read again.
  usePolling(() => load(window, null, target, true), {
    every: REFRESH_MS,
    active: visible && !notOffered && to === null,
    since: () => useHealthStore.getState().askedAt,
  });

  if (notOffered) {
    return (
      <p className="muted" data-testid="health-not-offered">
        This control plane does not offer provider health (it has no <code>/analytics/health</code>).
      </p>
    );
  }

  const from = health ? Date.parse(health.from) : 0;
  const last = health ? Date.parse(health.to) : 0;
  const cellMs = (health?.cell_minutes ?? 5) * 60_000;
  const thresholds = health?.thresholds;

  const figureCells = (figures: HealthFigures, name: string, subject: HealthSubject | null) => (
    <>
      <td>
        <StatusBadge status={figures.status} />
      </td>
      <td className="number">{formatCount(figures.requests)}</td>
      <td
        className="number"
        title={`${formatCount(figures.dispatched)} dispatched, ${formatCount(figures.refused)} refused by the gateway`}
      >
        {formatCount(figures.errors)}
        <span className="muted">
          {' '}
          · {figures.error_rate === null ? '–' : formatDecimal(figures.error_rate * 100, ' %')}
        </span>
      </td>
      <td className="number">{formatCount(figures.upstream_429)}</td>
      <td className="number">{formatMs(figures.p95_latency_ms)}</td>
      <td className="number">{formatMs(figures.p95_ttft_ms)}</td>
      <td>
        <Time iso={figures.last_success_at} minutes />
      </td>
      <td>
        <StatusStrip
          cells={stripCells(figures, from, cellMs)}
          cellMs={cellMs}
          name={name}
          onOpen={
            subject === null ? undefined : (cell) => go('requests', cellLogParams(subject, cell.start, cellMs, cell))
          }
        />
      </td>
    </>
  );

  /** A name that opens the request log over the whole window shown. */
  const windowLink = (subject: HealthSubject, text: string, what: string) => (
    <button
      type="button"
      className="link"
      onClick={() => go('requests', windowLogParams(subject, from, last))}
      title={`Open the request log of ${what} over this window`}
    >
      {text}
    </button>
  );

  return (
    <div className="health stack" data-testid="health-screen" aria-busy={loading} data-state={dataState(health, error)}>
      <p className="muted">
        From the request log itself: errors are 5xx answers and 429s from the upstream, over the requests the gateway
        dispatched (its own refusals, such as a key past its rate limit, are not a model&apos;s fault).
        {thresholds &&
          ` A model or five minutes is degraded from ${formatDecimal(thresholds.degraded_error_rate * 100, ' %')} errors and down from ${formatDecimal(thresholds.down_error_rate * 100, ' %')}.`}{' '}
        Select a square to open its five minutes in the request log, or a name for the whole window.
      </p>
      <div className="toolbar">
        <Field label="Window">
          <select
            value={window}
            onChange={(event) => setParams({ window: event.target.value === '1h' ? null : event.target.value })}
            data-testid="health-window"
          >
            {WINDOWS.map((w) => (
              <option key={w.value} value={w.value}>
                {w.label}
              </option>
            ))}
          </select>
        </Field>
        <TimeBound
          label="Ending at"
          value={params.to}
          onChange={(value) => setParams({ to: value })}
          testId="health-to"
          error={end.ok ? null : `${end.error}; the window ends now meanwhile`}
        />
        <TargetFilter value={target} onChange={(value) => setParams({ target: value })} />
        {params.to && (
          <button type="button" onClick={() => setParams({ to: null })} data-testid="health-now">
            Back to now
          </button>
        )}
        <span className="spacer" />
        {health && (
          <span className="muted" data-testid="health-as-of" aria-live="polite">
            {to === null ? 'As of' : 'Up to'} <Time iso={health.to} />
          </span>
        )}
      </div>
      <DataTable
        testId="health-table"
        label="Health by provider and model"
        className="health-table"
        columns={COLUMNS}
        rows={health ? linesOf(health) : null}
        rowKey={(line) => (line.kind === 'provider' ? `p:${line.provider.provider}` : `m:${line.model.model}`)}
        loading="Reading the health of each model…"
        error={error}
        onRetry={() => void load(window, to, target)}
        empty={
          target === null
            ? 'No model had traffic in the 7 days up to the window’s end.'
            : `${target} served no request in the 7 days up to the window’s end.`
        }
        row={(line: Line) =>
          line.kind === 'provider' ? (
            <tr
              key={`p:${line.provider.provider}`}
              className="health-provider"
              data-testid="health-provider"
              data-provider={line.provider.provider ?? ''}
            >
              <th scope="row">
                {line.provider.provider === null
                  ? providerName(line.provider)
                  : windowLink(
                      { provider: line.provider.provider, ...narrowed },
                      line.provider.provider,
                      `the models of ${line.provider.provider}`,
                    )}
              </th>
              {figureCells(
                line.provider,
                providerName(line.provider),
                line.provider.provider === null ? null : { provider: line.provider.provider, ...narrowed },
              )}
            </tr>
          ) : (
            <tr
              key={`m:${line.model.model}`}
              className="health-model"
              data-testid="health-model"
              data-model={line.model.model}
            >
              <th scope="row">
                {windowLink({ model: line.model.model, ...narrowed }, line.model.model, line.model.model)}
              </th>
              {figureCells(line.model, line.model.model, { model: line.model.model, ...narrowed })}
            </tr>
          )
        }
      />
    </div>
  );
}
