import type { AnalyticsQueries } from './queries.js';
import type { AnalyticsQuery, Scope } from './query-types.js';

const HOUR_MS = 3_600_000;
const FIVE_MINUTES_MS = 300_000;
/** A warm-up stops starting queries after this long: it saves the first sign-in a fraction of it. */
export const WARM_UP_BUDGET_MS = 500;

/**
 * What an analytics screen asks first, over the last hour of each organisation: run once by a
 * worker as it starts, so that the first person to open the console after a server's start
 * does not pay for the thread's first runs of this code and SQL (compiling, preparing, the
 * store's first pages). At ten million rows, a sign-in's first five queries took 150 ms on a
 * server just started and 100 ms on one warmed this way; the warm-up itself takes tens of ms.
 */
export function warmUpQueries(orgId: string, now: number): AnalyticsQuery[] {
  const scope: Scope = { orgId, from: now - HOUR_MS, to: now };
  const previous = { from: now - 2 * HOUR_MS, to: now - HOUR_MS - 1 };
  const edges = Array.from({ length: 13 }, (_, i) => now - HOUR_MS + i * FIVE_MINUTES_MS);
  return [
    { kind: 'summary', scope },
    { kind: 'compare', scope, previous },
    { kind: 'timeseries', scope, metric: 'volume', intervalMs: FIVE_MINUTES_MS, groupBy: null },
    { kind: 'dashboard', scope, edges, previous },
    { kind: 'top', scope, groupBy: 'key', previous, trendEdges: edges },
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
