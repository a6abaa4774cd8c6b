import { ClockTime } from '../../components/ClockTime.js';
import { SaveViewButton } from '../../commands/SaveViewButton.js';
import { ApiFilter } from '../../components/filters/ApiFilter.js';
import { DirectoryErrorNote, ScopeFilters } from '../../components/filters/ScopeFilters.js';
import { TargetFilter } from '../../components/filters/TargetFilter.js';
import { TimeRangeFilter } from '../../components/filters/TimeRangeFilter.js';
import { useRoute } from '../../state/route.js';
import { useAnalytics } from './analytics-store.js';
import { PARAM, type AnalyticsView } from './analytics-view.js';

/**
 * Time range, project, key, model, route target and API: each change goes into the route's parameters. Beside
 * them, a refresh now, auto-refresh (every 15 s, off until turned on) and when the figures on
 * screen were read.
 */
export function AnalyticsFilters({
  view,
  onRefresh,
  updatedAt,
}: {
  view: AnalyticsView;
  onRefresh: () => void;
  /** When the oldest figure on screen was read; null while none is known. */
  updatedAt: number | null;
}) {
  const setParams = useRoute((s) => s.setParams);
  const autoRefresh = useAnalytics((s) => s.autoRefresh);
  const setAutoRefresh = useAnalytics((s) => s.setAutoRefresh);
  return (
    <div className="analytics-filters" data-testid="analytics-filters">
      <div className="toolbar" role="group" aria-label="Filters">
        <TimeRangeFilter view={view} onChange={(range) => setParams({ [PARAM.range]: range })} />
        <ScopeFilters scope={view} onChange={setParams} />
        <TargetFilter value={view.target} onChange={(target) => setParams({ [PARAM.target]: target })} />
        <ApiFilter value={view.api} onChange={(api) => setParams({ [PARAM.api]: api })} />
        <button type="button" onClick={onRefresh} data-testid="analytics-refresh">
          Refresh
        </button>
        <button
          type="button"
          className="analytics-auto-refresh"
          aria-pressed={autoRefresh}
          title="Read the figures and the chart again every 15 seconds while this window is shown"
          onClick={() => setAutoRefresh(!autoRefresh)}
          data-testid="analytics-auto-refresh"
        >
          Auto-refresh
        </button>
        <SaveViewButton />
        <span className="muted analytics-updated" data-testid="analytics-updated">
          {autoRefresh ? 'Every 15 s · updated ' : 'Updated '}
          <ClockTime ms={updatedAt} />
        </span>
      </div>
      <DirectoryErrorNote />
    </div>
  );
}
