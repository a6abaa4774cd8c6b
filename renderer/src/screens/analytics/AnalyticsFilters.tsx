import { DirectoryErrorNote, ScopeFilters } from '../../components/filters/ScopeFilters.js';
import { TimeRangeFilter } from '../../components/filters/TimeRangeFilter.js';
import { useRoute } from '../../state/route.js';
import { PARAM, type AnalyticsView } from './analytics-view.js';

/** Time range, project, key and model: each change goes into the route's parameters. */
export function AnalyticsFilters({ view, onRefresh }: { view: AnalyticsView; onRefresh: () => void }) {
  const setParams = useRoute((s) => s.setParams);
  return (
    <div className="analytics-filters" data-testid="analytics-filters">
      <div className="toolbar" role="group" aria-label="Filters">
        <TimeRangeFilter view={view} onChange={(range) => setParams({ [PARAM.range]: range })} />
        <ScopeFilters scope={view} onChange={setParams} />
        <button type="button" onClick={onRefresh} data-testid="analytics-refresh">
          Refresh
        </button>
      </div>
      <DirectoryErrorNote />
    </div>
  );
}
