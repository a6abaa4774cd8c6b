import { Type, type Static } from '@sinclair/typebox';
import { ApiFilter, Nullable, TargetFilter } from './common.js';

/**
 * `GET /analytics/dashboard`, beyond the contract: the dashboard's time series over one window
 * and scope, in buckets of the organisation's reporting time zone (local days of 23 or 25
 * hours across daylight saving), and the prompt cache by model. Counts, sums and token figures
 * are exact (rollups plus the rows at the edges); the latency percentiles come from mergeable
 * log-scale sketches kept in the rollups, within `percentile_relative_error` of the exact value.
 */

export const DashboardQuery = Type.Object({
  time_range: Type.Optional(Type.String({ description: '<int><unit>, unit s, m, h or d; default 24h, at most 400d' })),
  interval: Type.Optional(
    Type.String({
      description:
        'Bucket width: a divisor of a day (e.g. 15m, 6h) or whole days (1d, 7d); default: the narrowest round width giving at most 120 buckets',
    }),
  ),
  project_id: Type.Optional(Type.String()),
  key_id: Type.Optional(Type.String()),
  model_alias: Type.Optional(Type.String()),
  target: TargetFilter,
  api: ApiFilter,
});
export type DashboardQuery = Static<typeof DashboardQuery>;

const Percentiles = Type.Object({ p50: Type.Number(), p95: Type.Number(), p99: Type.Number() });

/** A bucket's figures, or the whole window's. */
const Figures = {
  requests: Type.Integer(),
  /** Answered below 400. */
  ok: Type.Integer(),
  /** 4xx the upstream gave (the caller's request was at fault upstream). */
  client_errors: Type.Integer(),
  server_errors: Type.Integer({ description: '5xx' }),
  /** Refused by the gateway before dispatch: unknown key, model out of scope, rate or credit limit. */
  refused: Type.Integer(),
  cost_micro: Type.Integer({ description: 'Settled cost, micro-PKR' }),
  tokens: Type.Object({
    prompt: Nullable(
      Type.Integer({
        description: 'Prompt tokens not read from or written to the cache; null: unknown for every request',
      }),
    ),
    generated: Type.Integer(),
    cache_read: Nullable(Type.Integer({ description: 'null: no request of the bucket went through a prompt cache' })),
    cache_write: Nullable(Type.Integer()),
  }),
  tokens_per_second: Nullable(Type.Number()),
  /** End-to-end latency; null without requests. */
  latency_ms: Nullable(Percentiles),
  /** Time to first token; null when no request of the bucket has one. */
  ttft_ms: Nullable(Percentiles),
};

export const DashboardBucket = Type.Object({
  /** The bucket's start in the reporting zone, with that zone's offset at that instant. */
  start: Type.String({ format: 'date-time' }),
  ...Figures,
});
export type DashboardBucket = Static<typeof DashboardBucket>;

export const DashboardFigures = Type.Object(Figures);
export type DashboardFigures = Static<typeof DashboardFigures>;

export const CacheByModel = Type.Object({
  model: Type.String(),
  /**
   * Every prompt token (read from the cache, written to it, and the rest) of the requests whose
   * prompt count is known; null when none is.
   */
  prompt_tokens: Nullable(Type.Integer()),
  cache_read_tokens: Nullable(Type.Integer({ description: 'null: the model has no prompt cache' })),
  cache_write_tokens: Nullable(Type.Integer()),
  /** Share of those prompt tokens read from the cache; null without a cache or a known prompt count. */
  hit_share: Nullable(Type.Number()),
  /** What the cache reads would have cost more at the model's input price, micro-PKR; null when the price is unknown. */
  saved_micro: Nullable(Type.Integer()),
});
export type CacheByModel = Static<typeof CacheByModel>;

export const Dashboard = Type.Object({
  time_range: Type.String(),
  interval: Type.String(),
  /** The organisation's reporting zone (IANA name) the buckets follow. */
  time_zone: Type.String(),
  from: Type.String({ format: 'date-time' }),
  to: Type.String({ format: 'date-time' }),
  /** Relative error bound of every percentile (0.01: within 1 % of the exact value). */
  percentile_relative_error: Type.Number(),
  buckets: Type.Array(DashboardBucket),
  /**
   * The whole window's figures (its percentiles over all its requests, not of the buckets'), and
   * those of the window of the same length just before it, for "vs before" beside each panel.
   */
  totals: Type.Object({ current: DashboardFigures, previous: DashboardFigures }),
  cache: Type.Array(CacheByModel),
});
export type Dashboard = Static<typeof Dashboard>;
