import { useEffect } from 'react';
import { Loading } from '../../components/Feedback.js';
import { PageSizeSelect } from '../../components/PageSizeSelect.js';
import { pageSizeFrom } from '../../lib/page-size.js';
import { useRoute } from '../../state/route.js';
import { ActivityTable } from './ActivityTable.js';
import { useActivity } from './activity-store.js';
import { LoadMore } from './LoadMore.js';
import './activity.css';
import { dataState } from '../../lib/data-state.js';

/** The organisation's audit trail, newest first, read a page at a time. */
export function ActivityScreen() {
  const size = pageSizeFrom(useRoute((s) => s.params.size));
  const setParams = useRoute((s) => s.setParams);
  const events = useActivity((s) => s.events);
  const loading = useActivity((s) => s.loading);
  const error = useActivity((s) => s.error);
  const shift = useActivity((s) => s.shift);
  const load = useActivity((s) => s.load);

  // Opening the screen, or another page size, reads the newest events afresh.
  useEffect(() => {
    void load(size);
  }, [load, size]);

  return (
    <section
      className="activity stack"
      aria-label="Activity"
      data-testid="activity-screen"
      data-state={dataState(events, error)}
    >
      <p className="muted">
        Every change made to this organisation: who did it, from where and to what. Entries cannot be edited or removed.
      </p>
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
      {shift > 0 && (
        <p className="notice" role="status" data-testid="activity-newer">
          Newer events have been recorded since this list was read.{' '}
          <button type="button" className="link" onClick={() => void load(size)}>
            Refresh to show them
          </button>
        </p>
      )}
      <ActivityTable events={events} loading={loading} error={error} onRetry={() => void load(size)} />
      {events && events.length > 0 && <LoadMore />}
    </section>
  );
}
