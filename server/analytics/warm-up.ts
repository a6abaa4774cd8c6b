import { bucketEdges } from '../domain/reporting-zone.js';
import { burnDays } from '../domain/forecast.js';
import { DEFAULT_TIME_RANGE, defaultInterval, parseTimeRange } from './durations.js';
import type { AnalyticsQueries } from './queries.js';
import type { AnalyticsQuery, Scope } from './query-types.js';

/** A warm-up stops starting queries after this long: it saves the first sign-in a fraction of it. */
export const WARM_UP_BUDGET_MS = 500;
/** The window the console's Analytics screen opens on: its first sign-in reads these. */
const OPENING_WINDOW_MS = parseTimeRange(DEFAULT_TIME_RANGE).ms;

/**
 * What the console asks first on signing in (the Analytics screen over its opening window, the
 * spend badge's burn, a request-log page), each query as the HTTP routes make it: run once by
 * a worker as it starts, so that the first person to open the console after a server's start
 * does not pay for the thread's first runs of this code and SQL (compiling, preparing, the
 * store's first pages). Over the last hour instead (a window the console does not open on, so
 * other statements and pages), the first sign-in's queries at ten million rows took 47-140 ms
 * each on a started server, against 9-75 ms once warm. Buckets in UTC: the organisation's
 * reporting zone moves the edges, not the statements or the pages read.
 */
export function warmUpQueries(orgId: string, now: number): AnalyticsQuery[] {
  const scope: Scope = { orgId, from: now - OPENING_WINDOW_MS, to: now };
  const previous = { from: scope.from - OPENING_WINDOW_MS - 1, to: scope.from - 1 };
  const edges = (buckets?: number) =>
    bucketEdges('UTC', scope.from, scope.to, defaultInterval(OPENING_WINDOW_MS, buckets).ms);
  return [
    { kind: 'summary', scope },
    { kind: 'compare', scope, previous },
    { kind: 'timeseries', scope, metric: 'volume', intervalMs: defaultInterval(OPENING_WINDOW_MS).ms, groupBy: null },
    { kind: 'dashboard', scope, edges: edges(), previous },
    { kind: 'top', scope, groupBy: 'key', previous, trendEdges: edges(30) },
    { kind: 'burn', orgId, days: burnDays(now) },
    { kind: 'requests', filter: scope, limit: 50, offset: 0 },
  ];
}

/**
 * Runs the warm-up of each organisation in turn, and stops past `budgetMs` (a store on a cold
 * disk would otherwise hold the thread's first jobs, which wait without a deadline until it is
 * ready). Throws what the store throws; the worker drops it, and its first job reports it.
 */
export async function warmUp(
  queries: () => AnalyticsQueries,
  orgIds: readonly string[],
  now: number,
  budgetMs = WARM_UP_BUDGET_MS,
): Promise<void> {
  const started = performance.now();
  for (const orgId of orgIds) {
    for (const query of warmUpQueries(orgId, now)) {
      if (performance.now() - started > budgetMs) return;
      await queries().run(query);
    }
  }
}
