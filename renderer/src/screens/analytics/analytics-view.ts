import type { CallArgs } from '../../../../main/core/contract.js';
import {
  GROUP_BYS,
  MAX_BUCKETS,
  METRICS,
  bucketCount,
  checkTimeRange,
  durationMs,
  type GroupBy,
  type Metric,
} from '../../lib/timeseries.js';
import type { RouteParams } from '../../state/route.js';

/**
 * The analytics view as the route's parameters hold it (so a reload or a shared address
 * restores it), read back with defaults for what is absent and for what does not parse.
 */

export const PARAM = {
  range: 'range',
  project: 'project',
  key: 'key',
  model: 'model',
  metric: 'metric',
  interval: 'interval',
  groupBy: 'group',
} as const;

export const DEFAULT_RANGE = '24h';
const DEFAULT_RANGE_MS = 24 * 3_600_000;
export const RANGE_PRESETS = ['1h', '24h', '7d', '30d', '90d'] as const;
/** Bucket widths offered besides the server's default ("auto"). */
export const INTERVAL_CHOICES = ['1m', '5m', '15m', '1h', '6h', '1d', '7d'] as const;

export interface AnalyticsView {
  /** The range asked for: a valid `<int><unit>` text. */
  range: string;
  rangeMs: number;
  /** The range parameter when it did not parse (the default applies meanwhile). */
  badRange: { text: string; error: string } | null;
  project: string | null;
  key: string | null;
  model: string | null;
  metric: Metric;
  /** Null: the server's default for the range. */
  interval: string | null;
  groupBy: GroupBy | null;
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
  const asked = params[PARAM.range];
  const checked = checkTimeRange(asked ?? DEFAULT_RANGE);
  const range = checked.ok ? checked : { text: DEFAULT_RANGE, ms: DEFAULT_RANGE_MS };
  const interval = oneOf(INTERVAL_CHOICES, params[PARAM.interval]);
  return {
    range: range.text,
    rangeMs: range.ms,
    badRange: checked.ok || asked === undefined ? null : { text: asked, error: checked.error },
    project: params[PARAM.project] ?? null,
    key: params[PARAM.key] ?? null,
    model: params[PARAM.model] ?? null,
    metric: oneOf(METRICS, params[PARAM.metric]) ?? 'volume',
    // Too fine an interval for the range (after the range grew) falls back to the default.
    interval: interval && intervalFits(interval, range.ms) ? interval : null,
    groupBy: oneOf(GROUP_BYS, params[PARAM.groupBy]),
  };
}

type SummaryQuery = NonNullable<CallArgs<'api.summary'>['query']>;
type TimeseriesQuery = NonNullable<CallArgs<'api.timeseries'>['query']>;

export function summaryQuery(view: AnalyticsView): SummaryQuery {
  return {
    time_range: view.range,
    ...(view.project ? { project_id: view.project } : {}),
    ...(view.key ? { key_id: view.key } : {}),
    ...(view.model ? { model_alias: view.model } : {}),
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
