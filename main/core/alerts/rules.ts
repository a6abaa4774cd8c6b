import { Type, type Static } from '@sinclair/typebox';

/**
 * Alert rules an admin sets in the console, kept per connection profile. Each watches the
 * organisation the profile is signed in to; the host checks them while the console runs.
 */

const RuleId = Type.String({ minLength: 1, maxLength: 64, pattern: '^[\\w-]+$' });

export const AlertRule = Type.Union([
  /** A key has spent at least `percent` of its credit limit (settled spend). */
  Type.Object({ id: RuleId, kind: Type.Literal('limit_share'), percent: Type.Integer({ minimum: 1, maximum: 100 }) }),
  /** A key, or the organisation's deposits, runs out within `days` at the recent rate (GET /analytics/spend). */
  Type.Object({ id: RuleId, kind: Type.Literal('runs_out'), days: Type.Integer({ minimum: 1, maximum: 365 }) }),
  /** Over the last 15 minutes, more than `percent` of the organisation's requests answered 5xx. */
  Type.Object({ id: RuleId, kind: Type.Literal('error_rate'), percent: Type.Number({ minimum: 0, maximum: 100 }) }),
  /** A key expires within `days`. */
  Type.Object({ id: RuleId, kind: Type.Literal('expires'), days: Type.Integer({ minimum: 1, maximum: 365 }) }),
]);
export type AlertRule = Static<typeof AlertRule>;

export const AlertRules = Type.Array(AlertRule, { maxItems: 50 });

/** An alert that fired: what crossed which rule, when, and the screen that explains it. */
export const FiredAlert = Type.Object({
  /** Rises with every alert the profile fires: the renderer asks for those after the last it saw. */
  seq: Type.Integer({ minimum: 1 }),
  ruleId: Type.String(),
  /** What the condition is about (a key id, or the organisation): one alert per rule and subject until it clears. */
  subject: Type.String(),
  title: Type.String(),
  body: Type.String(),
  /** The console screen and its address parameters that explain the alert. */
  screen: Type.Union([Type.Literal('spend'), Type.Literal('keys'), Type.Literal('requests')]),
  params: Type.Record(Type.String(), Type.String()),
  firedAt: Type.String({ format: 'date-time' }),
});
export type FiredAlert = Static<typeof FiredAlert>;

/** What the last check of a profile's rules found, for the console to show beside the rules. */
export const AlertCheck = Type.Object({
  checkedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  /** Why the last check could not read what a rule needs (signed out, server down), or null. */
  problem: Type.Union([Type.String(), Type.Null()]),
});
export type AlertCheck = Static<typeof AlertCheck>;
