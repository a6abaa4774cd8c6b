import { useCallback, useEffect, useMemo } from 'react';
import { useDirectory } from '../../state/directory.js';
import { useRoute } from '../../state/route.js';
import { AnalyticsFilters } from './AnalyticsFilters.js';
import { useAnalytics } from './analytics-store.js';
import { summaryQuery, timeseriesQuery, viewFromParams } from './analytics-view.js';
import { SummaryCards } from './SummaryCards.js';
import { TimeseriesPanel } from './TimeseriesPanel.js';
import './analytics.css';

/**
 * Request telemetry of the organisation: filters (kept in the route, so a reload or a
 * shared address restores the view), the window's figures, and a chart over time.
 */
export function AnalyticsScreen() {
  const params = useRoute((s) => s.params);
  const view = useMemo(() => viewFromParams(params), [params]);
  const loadDirectory = useDirectory((s) => s.load);
  const loadSummary = useAnalytics((s) => s.loadSummary);
  const loadSeries = useAnalytics((s) => s.loadSeries);

  useEffect(() => {
    void loadDirectory();
  }, [loadDirectory]);

  // Queries as text: a new params object with the same values asks nothing again.
  const summaryKey = JSON.stringify(summaryQuery(view));
  const seriesKey = JSON.stringify(timeseriesQuery(view));
  const { rangeMs } = view;

  const refreshSummary = useCallback(() => void loadSummary(JSON.parse(summaryKey)), [loadSummary, summaryKey]);
  const refreshSeries = useCallback(
    () => void loadSeries(JSON.parse(seriesKey), rangeMs),
    [loadSeries, seriesKey, rangeMs],
  );

  useEffect(refreshSummary, [refreshSummary]);
  useEffect(refreshSeries, [refreshSeries]);

  return (
    <div className="analytics stack" data-testid="analytics-screen">
      <AnalyticsFilters
        view={view}
        onRefresh={() => {
          refreshSummary();
          refreshSeries();
        }}
      />
      <SummaryCards query={summaryQuery(view)} onRetry={refreshSummary} />
      <TimeseriesPanel view={view} onRetry={refreshSeries} />
    </div>
  );
}
