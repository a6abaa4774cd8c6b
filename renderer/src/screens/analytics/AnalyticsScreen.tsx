import { useCallback, useEffect, useMemo, useRef } from 'react';
import { useDocumentVisible, usePolling } from '../../components/usePolling.js';
import { mayStand } from '../../lib/revisit.js';
import { useDirectory } from '../../state/directory.js';
import { useRoute } from '../../state/route.js';
import { AnalyticsFilters } from './AnalyticsFilters.js';
import { useAnalytics } from './analytics-store.js';
import { useCompare } from './compare-store.js';
import { dashboardQuery, summaryQuery, timeseriesQuery, viewFromParams } from './analytics-view.js';
import { DashboardGrid } from './dashboard/DashboardGrid.js';
import { drawAfter } from './draw-when-idle.js';
import { useDashboard } from './dashboard/dashboard-store.js';
import { SummaryCards } from './SummaryCards.js';
import { TimeseriesPanel } from './TimeseriesPanel.js';
import { TopPanel } from './TopPanel.js';
import { RetentionNote } from '../organisation/RetentionNote.js';
import './analytics.css';

/** Auto-refresh's interval: a summary and a chart every 15 s keep the figures current at little cost. */
export const AUTO_REFRESH_MS = 15_000;

/** Whether a store's last answer may stay on screen while `key` is read again. */
function stands(answer: { query: unknown; at: number | null }, key: string): boolean {
  return mayStand(JSON.stringify(answer.query), answer.at, key);
}

/**
 * Request telemetry of the organisation: filters (kept in the route, so a reload or a
 * shared address restores the view), the window's figures, the dashboard's panels (in the
 * organisation's reporting zone, where the control plane offers them), and a chart over time.
 */
export function AnalyticsScreen() {
  const params = useRoute((s) => s.params);
  const view = useMemo(() => viewFromParams(params), [params]);
  const loadDirectory = useDirectory((s) => s.load);
  const loadSummary = useAnalytics((s) => s.loadSummary);
  const loadCompare = useCompare((s) => s.load);
  const loadSeries = useAnalytics((s) => s.loadSeries);
  const loadDashboard = useDashboard((s) => s.load);

  useEffect(() => {
    void loadDirectory();
  }, [loadDirectory]);

  // Queries as text: a new params object with the same values asks nothing again.
  const summaryKey = JSON.stringify(summaryQuery(view));
  const seriesKey = JSON.stringify(timeseriesQuery(view));
  const dashboardKey = JSON.stringify(dashboardQuery(view));
  const { rangeMs } = view;

  // When this screen last asked for its figures (Date.now()): a quiet read sets no loading state,
  // and auto-refresh must not ask again at once behind a revisit's reads.
  const askedAt = useRef<number | null>(null);
  // `quiet`: read again in the background, the figures on screen left as they are.
  const refreshSummary = useCallback(
    (quiet = false) => {
      askedAt.current = Date.now();
      return Promise.all([loadSummary(JSON.parse(summaryKey), quiet), loadCompare(JSON.parse(summaryKey))]);
    },
    [loadSummary, loadCompare, summaryKey],
  );
  const refreshSeries = useCallback(
    (quiet = false) => {
      askedAt.current = Date.now();
      void loadSeries(JSON.parse(seriesKey), rangeMs, quiet);
    },
    [loadSeries, seriesKey, rangeMs],
  );
  const refreshDashboard = useCallback(
    (quiet = false) => {
      askedAt.current = Date.now();
      return loadDashboard(JSON.parse(dashboardKey), quiet);
    },
    [loadDashboard, dashboardKey],
  );

  // The dashboard and the cards fill the window: asked first (the server's two analytics threads
  // take queries in the order they come, and the dashboard's is the longest), and the charts
  // below are drawn once they are in. A revisit of the same view shows its last figures at once
  // and reads them again in the background.
  useEffect(
    () => drawAfter(refreshDashboard(stands(useDashboard.getState(), dashboardKey))),
    [refreshDashboard, dashboardKey],
  );
  useEffect(
    () => drawAfter(refreshSummary(stands(useAnalytics.getState().summary, summaryKey))),
    [refreshSummary, summaryKey],
  );
  useEffect(() => refreshSeries(stands(useAnalytics.getState().series, seriesKey)), [refreshSeries, seriesKey]);

  // Auto-refresh: every part again, in the background, while on and the window is shown; a
  // tick that finds a load on its way asks nothing. The dashboard is not asked again of a
  // control plane that lacks it (a filter change or Refresh asks again).
  const autoRefresh = useAnalytics((s) => s.autoRefresh);
  const summaryAt = useAnalytics((s) => s.summary.at);
  const seriesAt = useAnalytics((s) => s.series.at);
  const dashboardAt = useDashboard((s) => (s.notOffered ? null : s.at));
  const visible = useDocumentVisible();
  // The oldest figure on screen was read then; a part with no figures (unknown) says nothing of it.
  const known = [summaryAt, seriesAt, dashboardAt].filter((at): at is number => at !== null);
  const updatedAt = known.length > 0 ? Math.min(...known) : null;
  usePolling(
    async () => {
      const { summary, series } = useAnalytics.getState();
      const dashboard = useDashboard.getState();
      if (summary.loading || series.loading || dashboard.loading) return;
      await Promise.all([
        loadSummary(JSON.parse(summaryKey), true),
        loadCompare(JSON.parse(summaryKey)),
        loadSeries(JSON.parse(seriesKey), rangeMs, true),
        dashboard.notOffered ? null : loadDashboard(JSON.parse(dashboardKey), true),
      ]);
    },
    { every: AUTO_REFRESH_MS, active: autoRefresh && visible, since: () => askedAt.current ?? updatedAt },
  );

  return (
    <div className="analytics stack" data-testid="analytics-screen">
      <AnalyticsFilters
        view={view}
        onRefresh={() => {
          void refreshSummary();
          refreshSeries();
          void refreshDashboard();
        }}
        updatedAt={updatedAt}
      />
      <RetentionNote fromMs={Date.now() - rangeMs} rows={false} />
      <SummaryCards query={summaryQuery(view)} onRetry={() => void refreshSummary()} />
      <DashboardGrid onRetry={() => void refreshDashboard()} />
      <TimeseriesPanel view={view} onRetry={() => refreshSeries()} />
      <TopPanel view={view} />
    </div>
  );
}
