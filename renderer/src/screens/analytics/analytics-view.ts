import type { CallArgs } from '#contract';
import { scopeFromParams, type Scope } from '../../lib/filter-scope.js';
import { UNIT_MS, durationMs, rangeFromParam, type RangeView } from '../../lib/time-range.js';
import { GROUP_BYS, MAX_BUCKETS, METRICS, bucketCount, type GroupBy, type Metric } from '../../lib/timeseries.js';
import type { RouteParams } from '../../state/route.js';

/**
 * The analytics view as the route's parameters hold it (so a reload or a shared address
 * restores it), read back with defaults for what is absent and for what does not parse.
 */

/** Project, key and model are the shared filter scope's parameters (lib/filter-scope.ts). */
export const PARAM = {
  range: 'range',
  metric: 'metric',
  interval: 'interval',
  groupBy: 'group',
  /** A route target, `provider/model`: only the requests it served (the server reads them from the rows). */
  target: 'target',
  /** One of the gateway's APIs: only the requests that came in on it (read from the rows too). */
  api: 'api',
} as const;

/** Bucket widths offered besides the server's default ("auto"). */
export const INTERVAL_CHOICES = ['1m', '5m', '15m', '1h', '6h', '1d', '7d'] as const;

export interface AnalyticsView extends RangeView, Scope {
  metric: Metric;
  /** Null: the server's default for the range. */
  interval: string | null;
  groupBy: GroupBy | null;
  target: string | null;
  api: string | null;
}

/** Whether `interval` gives a number of buckets over `rangeMs` that is worth asking for. */
export function intervalFits(interval: string, rangeMs: number): boolean {
  const ms = durationMs(interval);
  return ms !== null && bucketCount(rangeMs, ms) <= MAX_BUCKETS;
}

function oneOf<T extends string>(choices: readonly T[], value: string | undefined): T | null {
  return value !== undefined && (choices as readonly string[]).includes(value) ? (value as T) : null;
}

export function viewFromParams(params: RouteParams): AnalyticsView {
  const range = rangeFromParam(params[PARAM.range]);
  const interval = oneOf(INTERVAL_CHOICES, params[PARAM.interval]);
  return {
    ...range,
    ...scopeFromParams(params),
    metric: oneOf(METRICS, params[PARAM.metric]) ?? 'volume',
    // Too fine an interval for the range (after the range grew) falls back to the default.
    interval: interval && intervalFits(interval, range.rangeMs) ? interval : null,
    groupBy: oneOf(GROUP_BYS, params[PARAM.groupBy]),
    target: params[PARAM.target] || null,
    api: params[PARAM.api] || null,
  };
}

type SummaryQuery = NonNullable<CallArgs<'api.summary'>['query']>;
type TimeseriesQuery = NonNullable<CallArgs<'api.timeseries'>['query']>;
type DashboardQuery = NonNullable<CallArgs<'api.dashboard'>['query']>;

export function summaryQuery(view: AnalyticsView): SummaryQuery {
  return {
    time_range: view.range,
    ...(view.project ? { project_id: view.project } : {}),
    ...(view.key ? { key_id: view.key } : {}),
    ...(view.model ? { model_alias: view.model } : {}),
    ...(view.target ? { target: view.target } : {}),
    ...(view.api ? { api: view.api } : {}),
  };
}

export function timeseriesQuery(view: AnalyticsView): TimeseriesQuery {
  return {
    ...summaryQuery(view),
    metric: view.metric,
    ...(view.interval ? { interval: view.interval } : {}),
    ...(view.groupBy ? { group_by: view.groupBy } : {}),
  };
}

/**
 * More dashboard buckets than this and the view's interval is not passed on (the server then
 * picks its default, at most 120): each panel is a few hundred pixels wide, and six charts of
 * thousands of bars or points each would stall the screen for nothing legible.
 */
export const DASHBOARD_MAX_BUCKETS = 720;

/**
 * Whether the dashboard can take `interval` over `rangeMs`: its buckets follow the reporting
 * zone's days, so a width that divides a day (15m, 6h) or is whole days (1d, 7d), and not so
 * fine that the panels could not show its buckets.
 */
export function dashboardInterval(interval: string, rangeMs: number): boolean {
  const ms = durationMs(interval);
  if (ms === null) return false;
  const dayAligned = ms < UNIT_MS.d ? UNIT_MS.d % ms === 0 : ms % UNIT_MS.d === 0;
  return dayAligned && bucketCount(rangeMs, ms) <= DASHBOARD_MAX_BUCKETS;
}

/** The dashboard's question: the summary's window and scope, and the chart's interval where it fits. */
export function dashboardQuery(view: AnalyticsView): DashboardQuery {
  return {
    ...summaryQuery(view),
    ...(view.interval && dashboardInterval(view.interval, view.rangeMs) ? { interval: view.interval } : {}),
  };
}
