import { Type, type Static } from '@sinclair/typebox';
import { Nullable, Timestamp } from './common.js';

/**
 * `GET /routes`, beyond the contract: the routes document's newest version as the console's
 * Routes screen shows it, each target with its live state and its last 15 minutes from the rows.
 * Any member of the organisation may read it; only the operator's `routes apply` changes it.
 *
 * A target's `state`: `open` or `half_open` when a gateway's breaker for it says so (the worst
 * of all gateways: this process's, and those in other processes that reported within two
 * minutes); else `failing` when its last attempts in the window mostly failed; else `healthy`
 * when it has attempts in the window; else null (nothing known).
 */

export const TargetState = Type.Union([
  Type.Literal('healthy'),
  Type.Literal('failing'),
  Type.Literal('open'),
  Type.Literal('half_open'),
]);
export type TargetState = Static<typeof TargetState>;

export const RouteTargetView = Type.Object({
  provider: Type.String(),
  model: Type.String(),
  weight: Type.Number(),
  state: Nullable(TargetState),
  /** While open: when the breaker lets one probe through, epoch ms. */
  open_until: Nullable(Type.Integer({ description: 'epoch milliseconds' })),
  /** Attempts made on it (not skipped) in the last 15 minutes, by this organisation's requests. */
  attempts_15m: Type.Integer({ minimum: 0 }),
  /** Of those, the share whose answer went to the caller without an error; null without attempts. */
  success_rate_15m: Nullable(Type.Number({ minimum: 0, maximum: 1 })),
  p95_ms_15m: Nullable(Type.Number({ minimum: 0 })),
});
export type RouteTargetView = Static<typeof RouteTargetView>;

export const RoutePrice = Type.Object(
  {
    input: Type.Number(),
    output: Type.Number(),
    cache_write: Type.Number(),
    cache_read: Type.Number(),
  },
  { description: 'PKR per million tokens' },
);

export const RouteView = Type.Object({
  id: Type.String(),
  kind: Type.Union([Type.Literal('chat'), Type.Literal('embeddings')]),
  active: Type.Boolean(),
  strategy: Type.Union([Type.Literal('fallback'), Type.Literal('loadbalance')]),
  price: RoutePrice,
  targets: Type.Array(RouteTargetView),
});
export type RouteView = Static<typeof RouteView>;

export const RoutesView = Type.Object({
  version: Type.Integer({ minimum: 1 }),
  applied_at: Timestamp,
  /** The window the targets' figures cover, in minutes (15). */
  window_minutes: Type.Integer(),
  /** False when the request log could not be read: every target's figures are then empty. */
  figures_available: Type.Boolean(),
  routes: Type.Array(RouteView),
});
export type RoutesView = Static<typeof RoutesView>;
