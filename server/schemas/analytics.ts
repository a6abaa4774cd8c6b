import { Type, type Static } from '@sinclair/typebox';
import { ApiFilter, Nullable, Paging, TargetFilter, Timestamp } from './common.js';
import { RequestOutcomeFields, RowApi } from './request-log.js';

const Window = {
  time_range: Type.Optional(Type.String({ description: '<int><unit>, unit s, m, h or d; default 24h, at most 400d' })),
  project_id: Type.Optional(Type.String()),
  key_id: Type.Optional(Type.String()),
  target: TargetFilter,
  api: ApiFilter,
};

export const SummaryQuery = Type.Object({ ...Window, model_alias: Type.Optional(Type.String()) });
export type SummaryQuery = Static<typeof SummaryQuery>;

export const TimeseriesQuery = Type.Object({
  ...Window,
  model_alias: Type.Optional(Type.String()),
  metric: Type.Optional(Type.String({ description: 'volume (default), latency, ttft, tok_s or token_usage' })),
  interval: Type.Optional(Type.String({ description: 'bucket width; default gives 60 to 120 buckets' })),
  group_by: Type.Optional(
    Type.String({
      description:
        'project, key or model; beyond the contract, api (the gateway API each request came in on, read from the rows; group null: unknown)',
    }),
  ),
});
export type TimeseriesQuery = Static<typeof TimeseriesQuery>;

export const RequestsQuery = Type.Object({
  ...Window,
  // Beyond the contract: a window between two instants instead of the last `time_range`, and the
  // models of one provider (server/routes/analytics.ts says how they are read).
  from: Type.Optional(
    Type.String({ format: 'date-time', description: 'Beyond the contract: first instant, included; needs `to`' }),
  ),
  to: Type.Optional(
    Type.String({
      format: 'date-time',
      description: 'Beyond the contract: end of the window, excluded; with `from`, instead of time_range',
    }),
  ),
  provider: Type.Optional(
    Type.String({ minLength: 1, description: 'Beyond the contract: the models the catalogue gives this provider' }),
  ),
  include_revoked: Type.Optional(
    Type.Boolean({
      description:
        "Beyond the contract: with key_id, a revoked key of the caller's organisation is found too (its rows are kept)",
    }),
  ),
  model: Type.Optional(Type.String()),
  status_category: Type.Optional(Type.String({ description: '2xx, 3xx, 4xx or 5xx' })),
  termination_reason: Type.Optional(Type.String()),
  min_cost_pkr: Type.Optional(Type.Number({ minimum: 0 })),
  search: Type.Optional(Type.String({ maxLength: 1000 })),
  ...Paging,
});
export type RequestsQuery = Static<typeof RequestsQuery>;

export const ThrottlingQuery = Type.Object({ time_range: Window.time_range });
export type ThrottlingQuery = Static<typeof ThrottlingQuery>;

export const Summary = Type.Object({
  time_range: Type.String(),
  total_requests: Type.Integer(),
  avg_e2e_latency_ms: Nullable(Type.Number()),
  avg_ttft_ms: Nullable(Type.Number()),
  avg_tokens_per_sec: Nullable(Type.Number()),
  total_token_usage: Type.Integer(),
  total_cost_pkr: Type.Optional(Type.Number({ description: 'Present only when key_id is given' })),
});
export type Summary = Static<typeof Summary>;

export const Timeseries = Type.Object({
  metric: Type.String(),
  interval: Type.String(),
  group_by: Nullable(Type.String()),
  time_range: Type.String(),
  data: Type.Array(
    Type.Object({
      bucket: Type.String({ description: 'UTC, without offset' }),
      group: Nullable(Type.String()),
      value: Type.Number(),
    }),
  ),
});
export type Timeseries = Static<typeof Timeseries>;

const NamedRef = Nullable(Type.Object({ id: Type.String(), name: Nullable(Type.String()) }));

export const RequestLogRow = Type.Object({
  req_id: Type.String(),
  timestamp: Timestamp,
  model: Type.String(),
  status: Type.Integer(),
  stream: Type.Boolean(),
  api: RowApi,
  key: NamedRef,
  project: NamedRef,
  ...RequestOutcomeFields,
});
export type RequestLogRow = Static<typeof RequestLogRow>;

/** Beyond the contract: one request by its exact id (GET /analytics/requests/{req_id}). */
export const RequestIdParams = Type.Object({ req_id: Type.String({ minLength: 1, maxLength: 200 }) });
export type RequestIdParams = Static<typeof RequestIdParams>;

export const RequestPage = Type.Object({
  total: Type.Integer(),
  limit: Type.Integer(),
  offset: Type.Integer(),
  requests: Type.Array(RequestLogRow),
});
export type RequestPage = Static<typeof RequestPage>;

export const UsageThrottling = Type.Object({
  time_range: Type.String(),
  keys: Type.Array(
    Type.Object({
      id: Type.String(),
      name: Type.String(),
      key_prefix: Type.String(),
      rate_limit_rpm: Type.Integer(),
      requests_last_minute: Nullable(Type.Integer()),
      throttled_requests: Nullable(Type.Integer()),
      credit_limit_cents: Nullable(Type.Integer()),
      spent_cents: Type.Integer(),
    }),
  ),
});
export type UsageThrottling = Static<typeof UsageThrottling>;
