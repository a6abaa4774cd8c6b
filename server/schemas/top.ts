import { Type, type Static } from '@sinclair/typebox';
import { ApiFilter, Nullable, TargetFilter } from './common.js';

/**
 * `GET /analytics/top`, beyond the contract: the window's requests, spend, 5xx answers and mean
 * latency by key, model, project or the gateway's API the requests came in on, the largest first,
 * each beside the same window just before (the previous period), and what the rest add up to.
 * Exact: rollups plus the rows at the edges; by API (or narrowed to a target or an API), the rows.
 */

export const TopQuery = Type.Object({
  time_range: Type.Optional(Type.String({ description: '<int><unit>, unit s, m, h or d; default 24h, at most 400d' })),
  project_id: Type.Optional(Type.String()),
  key_id: Type.Optional(Type.String()),
  model_alias: Type.Optional(Type.String()),
  target: TargetFilter,
  api: ApiFilter,
  group_by: Type.Union([Type.Literal('key'), Type.Literal('model'), Type.Literal('project'), Type.Literal('api')]),
  sort: Type.Optional(Type.Union([Type.Literal('cost'), Type.Literal('requests')], { description: 'cost (default)' })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 50, default: 10 })),
});
export type TopQuery = Static<typeof TopQuery>;

const Figures = {
  requests: Type.Integer(),
  cost_micro: Type.Integer({ description: 'Settled cost, micro-PKR' }),
  /** Requests answered 5xx. */
  errors: Type.Integer(),
  mean_latency_ms: Nullable(Type.Number({ description: 'Mean end-to-end latency; null without requests' })),
  previous_requests: Type.Integer({ description: 'The same figures over the window just before' }),
  previous_cost_micro: Type.Integer(),
};

export const TopGroup = Type.Object({
  /**
   * The key's or project's id, the model, or the API; null for requests without a key (or project),
   * or whose API is unknown.
   */
  group: Nullable(Type.String()),
  /** The key's or project's name; null when it no longer exists, or for a model or an API. */
  name: Nullable(Type.String()),
  ...Figures,
  // Optional, as are trend_interval and time_zone: a control plane of the version before gives none.
  p95_latency_ms: Type.Optional(
    Nullable(
      Type.Number({ description: 'From mergeable sketches: within 1 % of the exact value; null without requests' }),
    ),
  ),
  /** Requests in each bucket of `trend_interval` over the window, in the reporting zone, oldest first. */
  trend: Type.Optional(Type.Array(Type.Integer())),
});
export type TopGroup = Static<typeof TopGroup>;

export const Top = Type.Object({
  time_range: Type.String(),
  group_by: Type.String(),
  sort: Type.String(),
  /** The width of the trend lines' buckets, and the organisation's reporting zone they follow. */
  trend_interval: Type.Optional(Type.String()),
  time_zone: Type.Optional(Type.String()),
  total: Type.Object(Figures),
  groups: Type.Array(TopGroup),
  /** What the groups past `limit` add up to; null when there are none. */
  others: Nullable(Type.Object({ count: Type.Integer(), ...Figures })),
});
export type Top = Static<typeof Top>;
