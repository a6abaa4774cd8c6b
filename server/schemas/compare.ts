import { Type, type Static } from '@sinclair/typebox';
import { ApiFilter, Nullable, TargetFilter } from './common.js';

/**
 * `GET /analytics/compare`, beyond the contract: the summary's figures (and the cost, for any
 * scope) over the window and over the window of the same length just before it, read in one
 * transaction so that the two are of the same moment. Means and rates are computed from the
 * rollups' sums, as the summary's are: exact.
 */

export const CompareQuery = Type.Object({
  time_range: Type.Optional(Type.String({ description: '<int><unit>, unit s, m, h or d; default 24h, at most 400d' })),
  project_id: Type.Optional(Type.String()),
  key_id: Type.Optional(Type.String()),
  model_alias: Type.Optional(Type.String()),
  target: TargetFilter,
  api: ApiFilter,
});
export type CompareQuery = Static<typeof CompareQuery>;

export const PeriodFigures = Type.Object({
  total_requests: Type.Integer(),
  avg_e2e_latency_ms: Nullable(Type.Number()),
  avg_ttft_ms: Nullable(Type.Number()),
  avg_tokens_per_sec: Nullable(Type.Number()),
  total_token_usage: Type.Integer(),
  cost_micro: Type.Integer({ description: 'Settled cost, micro-PKR' }),
});
export type PeriodFigures = Static<typeof PeriodFigures>;

export const Compare = Type.Object({
  time_range: Type.String(),
  current: PeriodFigures,
  previous: PeriodFigures,
});
export type Compare = Static<typeof Compare>;
