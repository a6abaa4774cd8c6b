import { Type, type Static } from '@sinclair/typebox';
import { ApiFilter, Nullable, TargetFilter, Timestamp } from './common.js';

/**
 * `GET /analytics/health`, beyond the contract: each provider's and each model's health over
 * the last hour or day, from the request log itself (no test calls), read from the dashboard's
 * five-minute cells (server/analytics/health.ts). A provider's figures are its own models'
 * traffic only, as the model catalogue names them; models the catalogue does not know are under
 * a provider of null.
 *
 * Errors are the requests the upstream side failed: 5xx answers (the gateway's 502/504 for an
 * upstream that broke, refused the platform's credentials or did not answer in time) and 429s
 * the upstream gave. The gateway's own refusals before dispatch (unknown key, model out of
 * scope, its rate and credit limits, a 429 without an upstream error) and the upstream's other
 * 4xx (the caller's request at fault) are not the model's health. The error rate is over the
 * requests dispatched (requests less those refusals); status thresholds are in the answer.
 */

export const HEALTH_WINDOWS = ['1h', '24h'] as const;
export type HealthWindow = (typeof HEALTH_WINDOWS)[number];

export const HealthQuery = Type.Object({
  window: Type.Optional(Type.String({ description: '1h or 24h; default 1h' })),
  to: Type.Optional(
    Type.String({
      format: 'date-time',
      description:
        'The window ends here (excluded), in whole five-minute cells, the last one holding the instant before; default now, and a later instant reads as now',
    }),
  ),
  target: TargetFilter,
  api: ApiFilter,
});
export type HealthQuery = Static<typeof HealthQuery>;

export const HealthStatus = Type.Union([
  Type.Literal('ok'),
  Type.Literal('degraded'),
  Type.Literal('down'),
  Type.Literal('no_traffic'),
]);
export type HealthStatus = Static<typeof HealthStatus>;

/** One five-minute cell after another, oldest first, as parallel arrays (288 cells a day stay small). */
const Strip = Type.Object({
  requests: Type.Array(Type.Integer()),
  errors: Type.Array(Type.Integer()),
  upstream_429: Type.Array(Type.Integer()),
  status: Type.Array(HealthStatus),
});

const Figures = {
  requests: Type.Integer(),
  /** Refused by the gateway before dispatch: never reached the model. */
  refused: Type.Integer(),
  /** Requests less refused: those the model's health is measured on. */
  dispatched: Type.Integer(),
  errors: Type.Integer({ description: '5xx and upstream 429s' }),
  error_rate: Nullable(Type.Number({ description: 'errors / dispatched; null when nothing was dispatched' })),
  upstream_429: Type.Integer({ description: '429s the upstream gave (not the gateway’s own rate-limit refusals)' }),
  p95_latency_ms: Nullable(Type.Number()),
  p95_ttft_ms: Nullable(Type.Number({ description: 'null when no request had a first token' })),
  last_success_at: Nullable(Timestamp),
  status: HealthStatus,
  strip: Strip,
};

export const ModelHealth = Type.Object({ model: Type.String(), ...Figures });
export type ModelHealth = Static<typeof ModelHealth>;

export const ProviderHealth = Type.Object({
  provider: Nullable(Type.String({ description: 'null: models the catalogue does not name' })),
  ...Figures,
  models: Type.Array(ModelHealth),
});
export type ProviderHealth = Static<typeof ProviderHealth>;

export const Health = Type.Object({
  window: Type.String(),
  /** The first cell's start: the window is whole five-minute cells, the last one running to `to` (included). */
  from: Timestamp,
  to: Timestamp,
  cell_minutes: Type.Integer(),
  percentile_relative_error: Type.Number(),
  thresholds: Type.Object({
    degraded_error_rate: Type.Number({ description: 'at least this error rate: degraded' }),
    down_error_rate: Type.Number({ description: 'at least this error rate: down' }),
  }),
  /** How far back a model without traffic in the window is still listed (its last success shown). */
  listed_since: Timestamp,
  providers: Type.Array(ProviderHealth),
});
export type Health = Static<typeof Health>;
