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
