import { ErrorNote } from '../../components/Feedback.js';
import { formatCount } from '../../lib/format.js';
import { useActivity } from './activity-store.js';

/** Below the table: the next, older page on request, or the word that the trail ends here. */
export function LoadMore() {
  const count = useActivity((s) => s.events?.length ?? 0);
  const done = useActivity((s) => s.done);
  const total = useActivity((s) => s.total);
  const filtered = useActivity((s) => Object.keys(s.filter).length > 0);
  const loadingMore = useActivity((s) => s.loadingMore);
  const moreError = useActivity((s) => s.moreError);
  const loadMore = useActivity((s) => s.loadMore);

  return (
    <div className="activity-more" data-testid="activity-more">
      <p className="muted" role="status" aria-live="polite" data-testid="activity-count">
        {done
          ? filtered
            ? `All ${formatCount(count)} matching events shown.`
            : `All ${formatCount(count)} events shown: this is the start of the trail.`
          : filtered && total !== null
            ? `${formatCount(count)} of ${formatCount(total)} matching events shown, newest first.`
            : `${formatCount(count)} newest events shown.`}
      </p>
      {!done && (
        <button type="button" onClick={() => void loadMore()} disabled={loadingMore} data-testid="activity-load-more">
          {loadingMore ? 'Loading older events…' : 'Load more'}
        </button>
      )}
      <ErrorNote error={moreError} onRetry={() => void loadMore()} testId="activity-more-error" />
    </div>
  );
}
