import { Fragment, useEffect } from 'react';
import { DataTable, type Column } from '../../components/DataTable.js';
import { Time } from '../../components/Time.js';
import { useDocumentVisible, usePolling } from '../../components/usePolling.js';
import { dataState } from '../../lib/data-state.js';
import { formatCount, formatDecimal, formatMs } from '../../lib/format.js';
import { formatPkrFigure } from '../../lib/money.js';
import { useRoute } from '../../state/route.js';
import { useRoutesStore, type RouteTargetView, type RouteView, type TargetState } from './routes-store.js';
import './routes.css';

/** Breakers open and close within seconds: re-read this often while the screen is seen. */
export const REFRESH_MS = 10_000;

const UNKNOWN = '–';

const COLUMNS: Column[] = [
  { label: 'Route · target' },
  { label: 'Kind' },
  { label: 'Price (PKR per million tokens)' },
  { label: 'Strategy · weight' },
  { label: 'State' },
  { label: 'Success', number: true },
  { label: 'p95', number: true },
  { label: 'Attempts', number: true },
];

/** HH:MM:SS in the reader's zone. */
const clock = (ms: number) =>
  new Date(ms).toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit', second: '2-digit', hour12: false });

export function stateLabel(state: TargetState | null, openUntil: number | null): string {
  switch (state) {
    case 'healthy':
      return 'Healthy';
    case 'failing':
      return 'Failing';
    case 'open':
      return openUntil === null ? 'Breaker open' : `Breaker open until ${clock(openUntil)}`;
    case 'half_open':
      return 'Probing';
    default:
      return UNKNOWN;
  }
}

function StateBadge({ target }: { target: RouteTargetView }) {
  const state = target.state;
  return (
    <span
      className={`route-state route-state-${state ?? 'unknown'}`}
      data-testid="route-target-state"
      data-state={state ?? 'unknown'}
      title={state === null ? 'No attempts in the last 15 minutes and no breaker open' : undefined}
    >
      {stateLabel(state, target.open_until)}
    </span>
  );
}

function Price({ route }: { route: RouteView }) {
  const { price } = route;
  return (
    <span data-testid="route-price" title="PKR per million tokens: input / output / cache write / cache read">
      {formatPkrFigure(price.input)} in · {formatPkrFigure(price.output)} out
      <span className="muted">
        {' '}
        · cache {formatPkrFigure(price.cache_write)} / {formatPkrFigure(price.cache_read)}
      </span>
    </span>
  );
}

const percent = (rate: number | null) => (rate === null ? UNKNOWN : formatDecimal(rate * 100, ' %'));

/** Every route of the routes document, its targets nested with their live state and last 15 minutes. */
export function RoutesScreen() {
  const { routes, loading, error, notOffered, load } = useRoutesStore();
  const visible = useDocumentVisible();
  const go = useRoute((s) => s.go);

  useEffect(() => {
    // A revisit shows what was read at once and reads it again in the background.
    void load(useRoutesStore.getState().routes !== null);
  }, [load]);
  usePolling(() => load(true), {
    every: REFRESH_MS,
    active: visible && !notOffered,
    since: () => useRoutesStore.getState().askedAt,
  });

  if (notOffered) {
    return (
      <p className="muted" data-testid="routes-not-offered">
        This control plane does not offer its routes (it has no <code>/routes</code>).
      </p>
    );
  }

  return (
    <div className="routes stack" data-testid="routes-screen" aria-busy={loading} data-state={dataState(routes, error)}>
      <p className="muted" data-testid="routes-note">
        The gateway&apos;s routes as the routes document&apos;s newest version has them. Routes change only through the
        operator&apos;s command <code>npm run admin -- routes apply</code>; this screen only shows them. A target&apos;s
        state is its breaker&apos;s on the gateways, else what its last attempts in your organisation&apos;s requests
        say; success rate, p95 and attempts are over the last 15 minutes. Select a target to see the health of the
        requests it served.
      </p>
      {routes && (
        <p data-testid="routes-version">
          Version <strong data-testid="routes-version-number">{routes.version}</strong>, applied{' '}
          <Time iso={routes.applied_at} />
          {!routes.figures_available && (
            <span className="muted" data-testid="routes-figures-unavailable">
              {' '}
              · the request log cannot be read now: no figures
            </span>
          )}
        </p>
      )}
      <DataTable
        testId="routes-table"
        label="Routes and their targets"
        className="routes-table"
        columns={COLUMNS}
        rows={routes ? routes.routes : null}
        rowKey={(route) => route.id}
        loading="Reading the routes…"
        error={error}
        onRetry={() => void load()}
        empty="The routes document has no routes."
        row={(route: RouteView) => (
          <Fragment key={route.id}>
            <tr className="route-row" data-testid="route-row" data-route={route.id}>
              <th scope="row">
                {route.id}
                {!route.active && (
                  <span className="muted" data-testid="route-inactive">
                    {' '}
                    (inactive)
                  </span>
                )}
              </th>
              <td>{route.kind}</td>
              <td>
                <Price route={route} />
              </td>
              <td>{route.strategy}</td>
              <td colSpan={4} />
            </tr>
            {route.targets.map((target, index) => (
              <tr
                key={`${route.id}:${index}`}
                className="route-target"
                data-testid="route-target"
                data-route={route.id}
                data-target={`${target.provider}/${target.model}`}
              >
                <td className="route-target-name">
                  <button
                    type="button"
                    className="link"
                    onClick={() => go('health', { target: `${target.provider}/${target.model}` })}
                    title="Open the health of the requests this target served"
                    data-testid="route-target-health"
                  >
                    {target.provider}/{target.model}
                  </button>
                </td>
                <td />
                <td />
                <td className="muted">weight {formatDecimal(target.weight)}</td>
                <td>
                  <StateBadge target={target} />
                </td>
                <td className="number" data-testid="route-target-success">
                  {percent(target.success_rate_15m)}
                </td>
                <td className="number" data-testid="route-target-p95">
                  {formatMs(target.p95_ms_15m)}
                </td>
                <td className="number" data-testid="route-target-attempts">
                  {target.attempts_15m === 0 && target.state === null ? UNKNOWN : formatCount(target.attempts_15m)}
                </td>
              </tr>
            ))}
          </Fragment>
        )}
      />
    </div>
  );
}
