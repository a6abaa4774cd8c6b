import { useEffect } from 'react';
import { Field } from '../../components/Field.js';
import { Pager } from '../../components/Pager.js';
import { useDocumentVisible, usePolling } from '../../components/usePolling.js';
import { FORECAST_METHOD } from '../../lib/forecast.js';
import { formatTime } from '../../lib/format.js';
import { pageSizeFrom } from '../../lib/page-size.js';
import { pageOf } from '../../lib/paging.js';
import { mayStand } from '../../lib/revisit.js';
import { useRoute, type RouteParams } from '../../state/route.js';
import { BudgetPanel } from './BudgetPanel.js';
import { SpendTable } from './SpendTable.js';
import { useSpendStore, type SpendQuery, type SpendSort } from './spend-store.js';
import './spend.css';
import { dataState } from '../../lib/data-state.js';

const SORTS: { value: SpendSort; label: string }[] = [
  { value: 'runs_out', label: 'Runs out first' },
  { value: 'burn', label: 'Most spent in 7 days' },
  { value: 'spent', label: 'Most spent in all' },
  { value: 'name', label: 'Name' },
];

/** Figures that move with live traffic, re-read this often while the screen is seen: one cheap query. */
const REFRESH_MS = 30_000;

function queryOf(params: RouteParams): SpendQuery {
  const size = pageSizeFrom(params.size);
  const sort = SORTS.find((s) => s.value === params.sort)?.value ?? 'runs_out';
  return { sort, limit: size, offset: (pageOf(params) - 1) * size };
}

/** Deposits, limits and spend; each key against its limit, its last week, and when it runs out. */
export function SpendScreen() {
  const params = useRoute((s) => s.params);
  const setParams = useRoute((s) => s.setParams);
  const { report, loading, error, notOffered, load } = useSpendStore();
  const visible = useDocumentVisible();
  const query = queryOf(params);
  const key = JSON.stringify(query);

  // A revisit of the same page shows it at once and reads it again in the background.
  useEffect(() => {
    const { answered, at } = useSpendStore.getState();
    void load(JSON.parse(key) as SpendQuery, mayStand(answered, at, key));
  }, [key, load]);
  usePolling(() => load(query, true), {
    every: REFRESH_MS,
    active: visible && !notOffered,
    since: () => useSpendStore.getState().askedAt,
  });

  if (notOffered) {
    return (
      <p className="muted" data-testid="spend-not-offered">
        This control plane does not offer spend figures (it has no <code>/analytics/spend</code>).
      </p>
    );
  }
  const now = report ? new Date(report.as_of).getTime() : Date.now();
  return (
    <div className="spend stack" data-testid="spend-screen" aria-busy={loading} data-state={dataState(report, error)}>
      {report && <BudgetPanel report={report} />}
      <section aria-labelledby="spend-keys-heading" className="stack">
        <h2 id="spend-keys-heading">Keys</h2>
        <div className="toolbar spend-toolbar">
          <Field label="Sort by">
            <select
              value={query.sort}
              onChange={(event) =>
                setParams({ sort: event.target.value === 'runs_out' ? null : event.target.value, page: null })
              }
              data-testid="spend-sort"
            >
              {SORTS.map((sort) => (
                <option key={sort.value} value={sort.value}>
                  {sort.label}
                </option>
              ))}
            </select>
          </Field>
          <Pager
            view={report && { offset: report.offset, shown: report.keys.length, total: report.total }}
            busy={loading}
            none="No active keys"
          />
          <span className="spacer" />
          <span className="muted" data-testid="spend-as-of">
            {report ? `As of ${formatTime(report.as_of)}` : ''}
          </span>
          <button type="button" onClick={() => void load(query)} disabled={loading}>
            Reload
          </button>
        </div>
        <SpendTable
          keys={report?.keys ?? null}
          total={report?.total}
          now={now}
          error={error}
          onRetry={() => void load(query)}
        />
        <p className="muted spend-method" data-testid="spend-method">
          {report && `Window: ${formatTime(report.window.from)} to ${formatTime(report.window.to)}. `}
          {FORECAST_METHOD}
        </p>
      </section>
    </div>
  );
}
