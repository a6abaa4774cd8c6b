import { METRIC_LABELS } from './chart-format.js';
import { unknownLabel } from './id-label.js';
import { apiLabel } from './request-api.js';
import { durationMs } from './time-range.js';
import {
  GROUP_BYS,
  METRICS,
  fillGaps,
  type GroupBy,
  type Metric,
  type RawPoint,
  type SeriesTable,
} from './timeseries.js';

/**
 * The server's timeseries answer made ready to draw, in two steps so each is redone only
 * when what it reads changes: filling the gaps reads the answer alone (the costly part);
 * naming and ordering the series reads the names of the groups it holds, which change
 * only when a project or key of the answer is renamed.
 */

/** The answer with the window it was asked for, [now - range, now] by this computer's clock. */
export interface AnswerInWindow {
  response: { metric: string; interval: string; group_by: string | null; data: readonly RawPoint[] };
  fromMs: number;
  toMs: number;
}

export interface FilledAnswer {
  table: SeriesTable;
  metric: Metric;
  groupBy: GroupBy | null;
  /** The bucket width the server used, as it wrote it ("15m"). */
  interval: string;
  intervalMs: number;
}

export type Failed = { error: string };

/** Every bucket of the window for every group; an answer that does not read says why. */
export function fillAnswer({ response, fromMs, toMs }: AnswerInWindow): FilledAnswer | Failed {
  const metric = (METRICS as readonly string[]).includes(response.metric) ? (response.metric as Metric) : null;
  if (!metric) return { error: `the server answered an unknown metric, ${response.metric}` };
  const groupBy = (GROUP_BYS as readonly string[]).includes(response.group_by ?? '')
    ? (response.group_by as GroupBy)
    : null;
  const intervalMs = durationMs(response.interval);
  if (intervalMs === null) return { error: `the server answered an interval that does not read, ${response.interval}` };
  try {
    const table = fillGaps(response.data, { metric, intervalMs, fromMs, toMs, grouped: groupBy !== null });
    return { table, metric, groupBy, interval: response.interval, intervalMs };
  } catch (error) {
    return { error: error instanceof Error ? error.message : String(error) };
  }
}

const NO_GROUP: Record<GroupBy, string> = {
  project: '(no project)',
  key: '(no key)',
  model: '(no model)',
  api: '(API unknown)',
};

/**
 * What a series is called: the project's or key's name from the directory, the model's
 * route id, the API's short name, "Unknown key (cccccccc…)" when the name is not known (a
 * revoked key), and a label in brackets for the rows without one.
 */
export function seriesName(
  groupBy: GroupBy | null,
  group: string | null,
  nameOf: (id: string) => string | null,
  ungrouped: string,
): string {
  if (groupBy === null) return ungrouped;
  if (group === null) return NO_GROUP[groupBy];
  if (groupBy === 'model') return group;
  if (groupBy === 'api') return apiLabel(group);
  return nameOf(group) ?? unknownLabel(groupBy, group);
}

/** The name of each series of `filled`, in its order. */
export function seriesNames(filled: FilledAnswer, nameOf: (groupBy: GroupBy, id: string) => string | null): string[] {
  const { groupBy, metric } = filled;
  return filled.table.series.map((series) =>
    seriesName(groupBy, series.group, (id) => (groupBy ? nameOf(groupBy, id) : null), METRIC_LABELS[metric]),
  );
}

/**
 * The series colours: the theme's (styles.css, --series-1 … --series-10), which it shades for
 * the light and the dark background alike so each line keeps 3:1 contrast against it.
 */
export const PALETTE = Array.from({ length: 10 }, (_, i) => `var(--series-${i + 1})`);

export interface NamedSeries {
  name: string;
  color: string;
}

export interface Prepared extends FilledAnswer {
  names: NamedSeries[];
}

/** The series ordered by name (rows without a group last), each with its name and colour. */
export function nameSeries(filled: FilledAnswer, names: readonly string[]): Prepared {
  const named = filled.table.series
    .map((series, i) => ({ series, name: names[i] ?? '' }))
    .sort((a, b) =>
      a.series.group === null || b.series.group === null
        ? Number(a.series.group === null) - Number(b.series.group === null)
        : a.name.localeCompare(b.name),
    );
  return {
    ...filled,
    table: { ...filled.table, series: named.map((n) => n.series) },
    names: named.map((n, i) => ({ name: n.name, color: PALETTE[i % PALETTE.length]! })),
  };
}
