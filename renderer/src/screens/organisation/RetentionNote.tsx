import { useEffect } from 'react';
import { formatTime, utcTitle } from '../../lib/format.js';
import { useRetention } from './retention-store.js';

const daysText = (days: number) => `${days} ${days === 1 ? 'day' : 'days'}`;

/**
 * Where the organisation's rows begin under its retention, on a screen that shows a window from
 * `fromMs`: the request log says it always (its list never reaches past it), the analytics when
 * their window does (counted there from the hourly and daily totals, which stay). Nothing on a
 * control plane without retention, or while it keeps every row.
 */
export function RetentionNote({ fromMs, rows }: { fromMs: number | null; rows: boolean }) {
  const retention = useRetention((s) => s.retention);
  const notOffered = useRetention((s) => s.notOffered);
  const load = useRetention((s) => s.load);
  useEffect(() => {
    if (!useRetention.getState().retention && !useRetention.getState().notOffered) void load();
  }, [load]);

  if (notOffered || !retention || retention.horizon === null || retention.effective_days === null) return null;
  const past = fromMs !== null && fromMs < Date.parse(retention.horizon);
  if (!rows && !past) return null;
  const at = (
    <time dateTime={retention.horizon} title={utcTitle(retention.horizon)}>
      {formatTime(retention.horizon)}
    </time>
  );
  const days = daysText(retention.effective_days);
  return (
    <p className="muted retention-note" data-testid="retention-note" data-past={past}>
      {rows ? (
        <>
          Requests are kept {days}: {past ? 'this list starts' : 'the log starts'} at {at}
          {past ? '; older ones were deleted.' : '.'}
        </>
      ) : (
        <>
          Older than {days} (before {at}): hourly and daily totals. Filters by target or API count only the rows kept.
        </>
      )}
    </p>
  );
}
