import { useEffect, useMemo } from 'react';
import { Loading } from '../../components/Feedback.js';
import { PageSizeSelect } from '../../components/PageSizeSelect.js';
import { dataState } from '../../lib/data-state.js';
import { pageSizeFrom } from '../../lib/page-size.js';
import { useRoute } from '../../state/route.js';
import { ActivityExport } from './ActivityExport.js';
import { ActivityFilters } from './ActivityFilters.js';
import { activityFilterQuery, isActivityFiltered } from './activity-query.js';
import { ActivityTable } from './ActivityTable.js';
import { useActivity } from './activity-store.js';
import { LoadMore } from './LoadMore.js';
import { VerifyChain } from './VerifyChain.js';
import './activity.css';

/** The organisation's audit trail, newest first, read a page at a time, filtered, exported and verified. */
export function ActivityScreen() {
  const params = useRoute((s) => s.params);
  const size = pageSizeFrom(params.size);
  const setParams = useRoute((s) => s.setParams);
  const events = useActivity((s) => s.events);
  const loading = useActivity((s) => s.loading);
  const error = useActivity((s) => s.error);
  const shift = useActivity((s) => s.shift);
  const extended = useActivity((s) => s.extended);
  const load = useActivity((s) => s.load);
  // The query as text: a new object with the same filters is not another question.
  const filterKey = JSON.stringify(activityFilterQuery(params));
  const filter = useMemo(() => JSON.parse(filterKey) as ReturnType<typeof activityFilterQuery>, [filterKey]);
  const filtered = extended !== false && isActivityFiltered(params);

  // Opening the screen, another page size or other filters read the newest events afresh.
  useEffect(() => {
    void load(size, filter);
  }, [load, size, filter]);

  return (
    <section
      className="activity stack"
      aria-label="Activity"
      data-testid="activity-screen"
      data-state={dataState(events, error)}
    >
      <p className="muted">
        Every change made to this organisation: who did it, from where and to what. Entries cannot be edited or removed,
        and each carries a hash chained to the one before it, so an edit made to the database file shows.
      </p>
      {extended === false ? (
        <p className="notice" role="status" data-testid="activity-not-extended">
          This control plane offers only the contract&apos;s activity list: no filters, changes, export or verification.
        </p>
      ) : (
        <ActivityFilters />
      )}
      <div className="toolbar">
        <PageSizeSelect
          label="Events per page"
          value={size}
          onChange={(n) => setParams({ size: String(n) })}
          testId="activity-page-size"
        />
        <button type="button" onClick={() => void load(size)} disabled={loading} data-testid="activity-refresh">
          {loading ? 'Refreshing…' : 'Refresh'}
        </button>
        {loading && events && <Loading>Reading the newest events…</Loading>}
      </div>
      {extended && (
        <div className="toolbar activity-tools">
          <ActivityExport />
          <VerifyChain />
        </div>
      )}
      {shift > 0 && (
        <p className="notice" role="status" data-testid="activity-newer">
          Newer events have been recorded since this list was read.{' '}
          <button type="button" className="link" onClick={() => void load(size)}>
            Refresh to show them
          </button>
        </p>
      )}
      <ActivityTable
        events={events}
        loading={loading}
        error={error}
        onRetry={() => void load(size)}
        filtered={filtered}
      />
      {events && events.length > 0 && <LoadMore />}
    </section>
  );
}
