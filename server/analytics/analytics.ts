import type { AnalyticsQuery, AnalyticsResult } from './query-types.js';

/**
 * Where the routes' analytics queries run: SQLite's worker threads (pool.ts) or a PostgreSQL
 * pool (postgres-analytics.ts). Either answers `AnalyticsUnavailable` when it cannot answer.
 */
export interface Analytics {
  /** Runs `query`; `signal` drops it while it still waits (its caller disconnected). */
  run<Q extends AnalyticsQuery>(query: Q, signal?: AbortSignal): Promise<AnalyticsResult<Q>>;
  /** Gets ready for the first screens (of `orgIds`, where it can run them ahead). */
  warm(orgIds?: readonly string[]): void;
  close(): Promise<void>;
}
