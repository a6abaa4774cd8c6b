import { Type, type Static } from '@sinclair/typebox';
import { Nullable, Timestamp } from './common.js';

export const Environment = Type.Union([
  Type.Literal('production'),
  Type.Literal('development'),
  Type.Literal('testing'),
]);

/** Largest credit limit whose micro-PKR value is still an exact integer in a double. */
export const MAX_CREDIT_LIMIT_MICRO = Number.MAX_SAFE_INTEGER;

export const CreateKeyBody = Type.Object({
  project_id: Type.String(),
  name: Type.String(),
  expires_at: Type.Optional(Type.String({ description: 'ISO 8601; without an offset it is read as UTC' })),
  credit_limit_cents: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_CREDIT_LIMIT_MICRO })),
  allowed_models: Type.Optional(Type.Array(Type.String())),
  environment: Type.Optional(Environment),
  use_platform_max_rate_limit: Type.Optional(Type.Boolean()),
});
export type CreateKeyBody = Static<typeof CreateKeyBody>;

const EnforcementStatus = Type.Object({
  expires_at: Type.Literal('enforced'),
  credit_limit_cents: Type.Literal('enforced'),
  allowed_models: Type.Literal('enforced'),
});

const KeyFields = {
  id: Type.String({ format: 'uuid' }),
  name: Type.String(),
  project_id: Type.String({ format: 'uuid' }),
  key_prefix: Type.String(),
  rate_limit_rpm: Type.Integer(),
  expires_at: Nullable(Timestamp),
  credit_limit_cents: Nullable(Type.Integer()),
  allowed_models: Nullable(Type.Array(Type.String())),
  environment: Environment,
};

export const CreatedKey = Type.Object({
  ...KeyFields,
  enforcement_status: EnforcementStatus,
  api_key: Type.String({ description: 'The secret, shown only in this response' }),
});
export type CreatedKey = Static<typeof CreatedKey>;

export const ListedKey = Type.Object({
  ...KeyFields,
  created_at: Timestamp,
  last_used_at: Nullable(Timestamp),
});
export type ListedKey = Static<typeof ListedKey>;

export const KeyList = Type.Object({ keys: Type.Array(ListedKey) });
export type KeyList = Static<typeof KeyList>;

export const KeyIdParams = Type.Object({ key_id: Type.String() });

/** 9999-12-31T23:59:59Z: the last instant an RFC 3339 timestamp (four-digit year) can show. */
export const MAX_EXPIRES_AT_SECONDS = 253_402_300_799;

export const UpdateKeyBody = Type.Object({
  rate_limit_rpm: Type.Integer({ minimum: 1 }),
  credit_limit_pkr: Type.Optional(Nullable(Type.Number({ minimum: 0, maximum: MAX_CREDIT_LIMIT_MICRO / 1e6 }))),
  expires_at: Type.Optional(
    Nullable(Type.Integer({ minimum: 0, maximum: MAX_EXPIRES_AT_SECONDS, description: 'Unix epoch seconds' })),
  ),
});
export type UpdateKeyBody = Static<typeof UpdateKeyBody>;

export const UpdatedKey = Type.Object({
  id: KeyFields.id,
  key_prefix: KeyFields.key_prefix,
  rate_limit_rpm: KeyFields.rate_limit_rpm,
  expires_at: KeyFields.expires_at,
  credit_limit_cents: KeyFields.credit_limit_cents,
});
export type UpdatedKey = Static<typeof UpdatedKey>;

// Beyond the contract: the console's safe key operations (impact, rotate, bulk).

/** Rotation's answer: the replacement as POST /keys gives it (the secret once), and the key it replaces. */
export const RotatedKey = Type.Object({
  ...CreatedKey.properties,
  replaces: Type.Object({ id: KeyFields.id, key_prefix: KeyFields.key_prefix }),
});
export type RotatedKey = Static<typeof RotatedKey>;

const CallerCount = Type.Object({ name: Type.String(), requests: Type.Integer() });

/** What depends on a key: null figures are unknown (the telemetry store unreachable). */
export const KeyImpact = Type.Object({
  id: KeyFields.id,
  key_prefix: KeyFields.key_prefix,
  as_of: Timestamp,
  requests_last_5m: Nullable(Type.Integer()),
  requests_last_24h: Nullable(Type.Integer()),
  requests_last_7d: Nullable(Type.Integer()),
  last_used_at: Nullable(Timestamp),
  callers: Nullable(
    Type.Object({
      window: Type.String({ description: 'The window the callers were read in, such as 7d' }),
      /** How many of the newest requests in the window were read (at most `sample_limit`). */
      requests_read: Type.Integer(),
      sample_limit: Type.Integer(),
      /** True when every request of the window was read: the counts below are then exact. */
      complete: Type.Boolean(),
      /** Distinct user agents among the requests read; the most frequent `TOP` are in `user_agents`. */
      distinct_user_agents: Type.Integer(),
      user_agents: Type.Array(CallerCount),
      /** Distinct metadata keys among the requests read; the most frequent are in `metadata`. */
      distinct_metadata_keys: Type.Integer(),
      metadata: Type.Array(
        Type.Object({
          key: Type.String({ description: 'The header name after X-SVC-Meta-, lowercased' }),
          requests: Type.Integer(),
          distinct_values: Type.Integer(),
          values: Type.Array(CallerCount),
        }),
      ),
    }),
  ),
});
export type KeyImpact = Static<typeof KeyImpact>;

/** At most this many keys in one bulk call. */
export const BULK_MAX_KEYS = 100;

/** PATCH's fields and units; each left out keeps every key's own value. */
export const BulkKeyLimits = Type.Object({
  rate_limit_rpm: Type.Optional(UpdateKeyBody.properties.rate_limit_rpm),
  credit_limit_pkr: UpdateKeyBody.properties.credit_limit_pkr,
  expires_at: UpdateKeyBody.properties.expires_at,
});
export type BulkKeyLimits = Static<typeof BulkKeyLimits>;

export const BulkKeysBody = Type.Object({
  action: Type.Union([Type.Literal('revoke'), Type.Literal('update_limits')]),
  key_ids: Type.Array(Type.String({ maxLength: 64 }), { minItems: 1, maxItems: BULK_MAX_KEYS }),
  /** Required by `update_limits`, with at least one field. */
  limits: Type.Optional(BulkKeyLimits),
  dry_run: Type.Boolean(),
});
export type BulkKeysBody = Static<typeof BulkKeysBody>;

const BulkLimits = Type.Object({
  rate_limit_rpm: KeyFields.rate_limit_rpm,
  credit_limit_cents: KeyFields.credit_limit_cents,
  expires_at: KeyFields.expires_at,
});

export const BulkKeyOutcome = Type.Object({
  id: Type.String(),
  name: Nullable(Type.String()),
  key_prefix: Nullable(Type.String()),
  /** ok: done (or, in a dry run, would be); refused: the message says why; not_found: no such active key. */
  outcome: Type.Union([Type.Literal('ok'), Type.Literal('refused'), Type.Literal('not_found')]),
  message: Nullable(Type.String()),
  before: Nullable(BulkLimits),
  /** The limits after the change; null for a revocation or a refusal. */
  after: Nullable(BulkLimits),
});
export type BulkKeyOutcome = Static<typeof BulkKeyOutcome>;

export const BulkKeysResult = Type.Object({ dry_run: Type.Boolean(), results: Type.Array(BulkKeyOutcome) });
export type BulkKeysResult = Static<typeof BulkKeysResult>;
