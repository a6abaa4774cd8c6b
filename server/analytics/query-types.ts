import type { RequestApi } from '../schemas/request-log.js';
import type { RequestRecord } from '../stores/telemetry/request-record.js';
import type { ProviderHealthFigures } from './health.js';
import type { HealthQuery } from './health-reads.js';
import type { RouteTargetsQuery, TargetFigures } from './route-targets.js';
import type {
  ReconcileDayQuery,
  ReconcileDayResult,
  ReconcileSpendQuery,
  ReconcileSpendResult,
} from './reconcile-types.js';

/**
 * The analytics queries and their results, as the routes ask them, the worker pool carries
 * them and the query code (queries.ts, rollup-sql.ts) answers them.
 */

/** Rows of one organisation in `[from, to]` (epoch ms, both edges included), optionally narrowed. */
export interface Scope {
  orgId: string;
  from: number;
  to: number;
  projectId?: string;
  keyId?: string;
  model?: string;
  /**
   * Only rows whose `served_by` is this target (`provider/model`). No rollup or cell carries
   * `served_by`, so a scope naming one is read from the rows alone (windows.ts, `cellGrains`).
   */
  servedBy?: string;
  /**
   * Only rows that came in on this API of the gateway's (`api`); rows whose API is unknown (null)
   * never match. No rollup or cell carries `api` either: read from the rows alone, as `servedBy`.
   */
  api?: RequestApi;
  /**
   * The organisation's retention horizon (epoch ms, a whole hour): rows before it are deleted
   * or about to be. The window before it is counted from whole rollup cells alone (windows.ts,
   * `keptSegments`), and a list of rows starts at it.
   */
  horizon?: number;
  /** From when the store keeps the fine grains' cells (fine-cells.ts): before it they are not read. */
  fineFrom?: number;
}

export interface RequestFilter extends Scope {
  /** One provider's models, as a JSON array of ids (bound as one parameter, read with json_each). */
  models?: string;
  /** 2, 3, 4 or 5: the status class. */
  statusClass?: number;
  terminationReason?: string;
  /** Smallest cost in micro-PKR whose PKR value is at least the asked minimum. */
  minCostMicro?: number;
  /** Lowercased search text. */
  search?: string;
}

export type Metric = 'volume' | 'latency' | 'ttft' | 'tok_s' | 'token_usage';
/** A grouping the rollups' cells are kept by. */
export type CellGroupBy = 'project' | 'key' | 'model';
/** A grouping of the rows: by a rollup's dimension, or by `api`, which no cell carries (read from the rows). */
export type GroupBy = CellGroupBy | 'api';

export type AnalyticsQuery =
  | { kind: 'summary'; scope: Scope }
  | { kind: 'timeseries'; scope: Scope; metric: Metric; intervalMs: number; groupBy: GroupBy | null }
  | { kind: 'requests'; filter: RequestFilter; limit: number; offset: number }
  | { kind: 'throttling'; orgId: string; keyIds: string[]; from: number; to: number }
  /** The summary over the scope's window and over `previous` (both edges included), in one read. */
  | { kind: 'compare'; scope: Scope; previous: { from: number; to: number } }
  /**
   * Usage and 5xx answers by `groupBy` over the scope's window and over `previous` (both edges
   * included), and each group's requests between `trendEdges` and latency percentiles.
   */
  | { kind: 'top'; scope: Scope; groupBy: GroupBy; previous: { from: number; to: number }; trendEdges: number[] }
  /** Cost by key over each of `days` ([from, to], both edges included). */
  | { kind: 'burn'; orgId: string; days: { from: number; to: number }[]; horizon?: number; fineFrom?: number }
  /**
   * The dashboard's figures in the buckets between `edges` (ascending; edges[0] <= scope.from <
   * edges.at(-1)), over the whole window, and over `previous` (both edges included).
   */
  | { kind: 'dashboard'; scope: Scope; edges: number[]; previous: { from: number; to: number } }
  /** What depends on one key (key-impact.ts): its traffic, last use and callers. */
  | ({ kind: 'impact' } & KeyImpactQuery)
  /** One request by its id (the primary key), when it is the organisation's. */
  | { kind: 'request'; orgId: string; reqId: string; horizon?: number }
  /** One UTC day of a reconciliation: its totals and its rollup cells against its rows (reconcile-telemetry.ts). */
  | ({ kind: 'reconcile_day' } & ReconcileDayQuery)
  /** The keys' lifetime cost and the spend outbox, for a reconciliation. */
  | ({ kind: 'reconcile_spend' } & ReconcileSpendQuery)
  /** Each provider's and model's health over whole five-minute cells (health.ts). */
  | ({ kind: 'health' } & HealthQuery)
  /** Each route target's attempts, success rate and p95 over a short window (route-targets.ts). */
  | ({ kind: 'route_targets' } & RouteTargetsQuery);

/** The figures of what depends on one key: see key-impact.ts. */
export interface KeyImpactQuery {
  orgId: string;
  keyId: string;
  now: number;
  /** Windows counted, in ms, each from `now` less it, with no upper edge (rows ahead of now count). */
  windowsMs: readonly number[];
  /** The callers' window in ms (the widest counted one, typically). */
  callersWindowMs: number;
  sampleRows: number;
  /** Most user agents and metadata keys returned; values per metadata key. */
  topCallers: number;
  /** From when the store keeps the fine grains' cells (fine-cells.ts): before it they are not read. */
  fineFrom?: number;
  topValues: number;
}

export interface CallerCount {
  name: string;
  requests: number;
}

export interface MetadataCallers {
  key: string;
  /** Sampled requests carrying this key. */
  requests: number;
  /** Distinct values among them. */
  distinctValues: number;
  values: CallerCount[];
}

export interface KeyImpactResult {
  /** Requests in each of `windowsMs`, in that order. */
  requests: number[];
  lastUsed: number | null;
  /** Requests read for the callers (at most `sampleRows`). */
  sampled: number;
  /** Whether those were every request of the callers' window. */
  complete: boolean;
  /** Distinct user agents and metadata keys among them, of which the top `topCallers` are given. */
  distinctUserAgents: number;
  userAgents: CallerCount[];
  distinctMetadataKeys: number;
  metadata: MetadataCallers[];
}

export interface SummaryResult {
  requests: number;
  avgTotalMs: number | null;
  avgTtftMs: number | null;
  tokensPerSecond: number | null;
  totalTokens: number;
  costMicro: number;
}

/**
 * The timeseries `data` array as JSON text, buckets already formatted: a fine interval
 * over a long window can give millions of points, and formatting them here keeps that
 * work off the event loop that serves the rest of the API.
 */
export interface SeriesJson {
  points: number;
  /**
   * SQLite's as its UTF-8 bytes, which the server writes as they are: as a string, a chart of a
   * million bytes cost the event loop ~7 ms to measure and encode again. PostgreSQL's as text.
   */
  json: string | Uint8Array;
}

export interface RequestPage {
  total: number;
  rows: RequestRecord[];
}

export interface ThrottlingResult {
  lastMinute: Record<string, number>;
  throttled: Record<string, number>;
}

/** Micro-PKR a day, one figure per asked day: by key id, and over every row of the organisation. */
export interface BurnResult {
  byKey: Record<string, number[]>;
  organization: number[];
}

/** One group's figures (group null: rows without a key, project); `previous*` over the window before. */
export interface TopRow {
  group: string | null;
  requests: number;
  totalMs: number;
  costMicro: number;
  errors: number;
  previousRequests: number;
  previousCostMicro: number;
  /** Requests per trend bucket. */
  trend: number[];
  /** p50, p95, p99 of the latency, from the sketches; null without requests. */
  latency: number[] | null;
}

/** One bucket of the dashboard: measures in board-cells.ts's BOARD_MEASURES order; p50, p95, p99 or null. */
export interface DashboardPoint {
  measures: number[];
  latency: number[] | null;
  ttft: number[] | null;
}

export interface CacheSums {
  model: string;
  prompt_tokens: number;
  prompt_rows: number;
  cache_read: number;
  cache_write: number;
  cache_rows: number;
  /** Cache tokens of the rows whose prompt count is known. */
  known_read: number;
  known_write: number;
}

export interface DashboardResult {
  points: DashboardPoint[];
  current: DashboardPoint;
  previous: DashboardPoint;
  cache: CacheSums[];
}

export type AnalyticsResult<Q extends AnalyticsQuery> = Q extends { kind: 'summary' }
  ? SummaryResult
  : Q extends { kind: 'timeseries' }
    ? SeriesJson
    : Q extends { kind: 'requests' }
      ? RequestPage
      : Q extends { kind: 'burn' }
        ? BurnResult
        : Q extends { kind: 'dashboard' }
          ? DashboardResult
          : Q extends { kind: 'top' }
            ? TopRow[]
            : Q extends { kind: 'compare' }
              ? { current: SummaryResult; previous: SummaryResult }
              : Q extends { kind: 'impact' }
                ? KeyImpactResult
                : Q extends { kind: 'request' }
                  ? RequestRecord | null
                  : Q extends { kind: 'reconcile_day' }
                    ? ReconcileDayResult
                    : Q extends { kind: 'reconcile_spend' }
                      ? ReconcileSpendResult
                      : Q extends { kind: 'health' }
                        ? ProviderHealthFigures[]
                        : Q extends { kind: 'route_targets' }
                          ? TargetFigures[]
                          : ThrottlingResult;
