import { Type, type Static } from '@sinclair/typebox';
import { Nullable } from './common.js';
import { Attempts, RequestApi, TerminationReason } from './request-log.js';

/**
 * The internal API between the control plane and gateways in other processes
 * (`/internal/gateway/…`, a service token from `SVC_GATEWAY_TOKENS`, never a user's session).
 * The control plane decides every request (one count of each key's rate and credit holds for
 * all gateways), a gateway forwards and measures, and sends back one row per call. Both sides
 * check what they receive against these schemas.
 */

const Id = Type.String({ minLength: 1, maxLength: 64 });
/** Request ids the gateway makes: `req_` and 32 hexadecimal digits. */
export const GatewayRequestId = Type.String({ pattern: '^req_[0-9a-f]{32}$' });
const Headers = Type.Record(Type.String({ maxLength: 64 }), Type.String({ maxLength: 256 }));

/** An error in OpenAI's shape, with its status and headers (`retry-after`, `x-ratelimit-*`). */
export const RefusalWire = Type.Object({
  status: Type.Integer({ minimum: 400, maximum: 599 }),
  message: Type.String({ maxLength: 1024 }),
  type: Type.String({ maxLength: 64 }),
  code: Nullable(Type.String({ maxLength: 64 })),
  headers: Headers,
});
export type RefusalWire = Static<typeof RefusalWire>;

/** Whose a request is: what its row is filed under. */
export const KeyOwnerWire = Type.Object({ id: Id, org_id: Id, project_id: Id });
export type KeyOwnerWire = Static<typeof KeyOwnerWire>;

const Price = Type.Object({
  input: Type.Number({ minimum: 0 }),
  output: Type.Number({ minimum: 0 }),
  cacheWrite: Type.Number({ minimum: 0 }),
  cacheRead: Type.Number({ minimum: 0 }),
});

export const AdmissionRequest = Type.Object({
  reqId: GatewayRequestId,
  /** The bearer secret the caller presented. */
  secret: Type.String({ minLength: 1, maxLength: 512 }),
  model: Type.String({ maxLength: 256 }),
  /**
   * The kind of route the request's API serves (embeddings, or chat for every other): another
   * kind is refused as the wrong model before anything is held (absent: not checked, as older
   * gateways send it).
   */
  kind: Type.Optional(Type.Union([Type.Literal('chat'), Type.Literal('embeddings')])),
  /** Characters bounding the prompt's tokens from above (the whole request body). */
  boundCharacters: Type.Integer({ minimum: 0 }),
  /** Tokens the answer may generate, over all its choices. */
  maxGenerated: Type.Integer({ minimum: 1 }),
  /**
   * The body holds parts whose tokens its characters do not bound (images, audio, files): the
   * request holds all the credit its key has left while it runs (absent: false).
   */
  boundUncertain: Type.Optional(Type.Boolean()),
  /** The gateway's own timeout: the credit held for the request lapses a minute after it. */
  timeoutMs: Type.Integer({ minimum: 1, maximum: 3_600_000 }),
});
export type AdmissionRequest = Static<typeof AdmissionRequest>;

const Ms = Type.Integer({ minimum: 0, maximum: 3_600_000 });

/** A route's bounds, as the routes document names them (../domain/routes-document.ts). */
export const FailoverWire = Type.Object({
  timeout_ms: Type.Integer({ minimum: 1, maximum: 3_600_000 }),
  answer_timeout_ms: Ms,
  first_byte_timeout_ms: Ms,
  stream_idle_timeout_ms: Ms,
  retries: Type.Integer({ minimum: 0, maximum: 10 }),
  max_attempts: Type.Integer({ minimum: 1, maximum: 20 }),
  backoff_ms: Ms,
  retry_after_max_ms: Ms,
  breaker_failures: Type.Integer({ minimum: 1, maximum: 1000 }),
  breaker_cooldown_ms: Ms,
});

/** One target of an admitted request's route, with what the gateway needs to reach it. */
export const TargetPlan = Type.Object({
  provider: Type.String({ maxLength: 64 }),
  model: Type.String({ maxLength: 256 }),
  weight: Type.Number({ exclusiveMinimum: 0 }),
  api: Type.Array(Type.Union([Type.Literal('openai'), Type.Literal('anthropic')]), { minItems: 1, maxItems: 2 }),
  /** Null: the gateway's `SVC_UPSTREAM_<PROVIDER>_URL`, else `SVC_UPSTREAM_URL`. */
  baseUrl: Nullable(Type.String({ maxLength: 2048 })),
  /** The gateway's variable holding the platform key; null: `SVC_UPSTREAM_<PROVIDER>_KEY`, else `SVC_UPSTREAM_KEY`. */
  keyEnv: Nullable(Type.String({ maxLength: 128 })),
  /** The organisation's own key for this provider (BYOK), opened for this request only; null: the platform's. */
  providerKey: Nullable(Type.String({ maxLength: 4096 })),
});
export type TargetPlan = Static<typeof TargetPlan>;

/**
 * What an admitted request is served by: its route as one version of the routes document has it,
 * whole. A request plans once, from this, and finishes on this version whatever is applied meanwhile.
 */
export const RoutePlan = Type.Object({
  version: Type.Integer({ minimum: 1 }),
  route: Type.String({ maxLength: 256 }),
  kind: Type.Union([Type.Literal('chat'), Type.Literal('embeddings')]),
  strategy: Type.Union([Type.Literal('fallback'), Type.Literal('loadbalance')]),
  price: Price,
  promptCache: Type.Boolean(),
  failover: FailoverWire,
  targets: Type.Array(TargetPlan, { minItems: 1, maxItems: 64 }),
});
export type RoutePlan = Static<typeof RoutePlan>;

export const Decision = Type.Union([
  Type.Object({
    kind: Type.Literal('refused'),
    /** Null for an unknown key: there is nobody to file a row under. */
    key: Nullable(KeyOwnerWire),
    refusal: RefusalWire,
  }),
  Type.Object({
    kind: Type.Literal('admitted'),
    key: KeyOwnerWire,
    plan: RoutePlan,
    rateHeaders: Headers,
  }),
]);
export type Decision = Static<typeof Decision>;
export type Admitted = Extract<Decision, { kind: 'admitted' }>;

/**
 * Each request is checked on its own (against `AdmissionRequest`), not by the batch's schema: one
 * gateway's batch carries many callers' requests, and one malformed request must not fail the rest.
 */
export const AdmissionBatch = Type.Object({
  requests: Type.Array(Type.Unknown({ description: 'an AdmissionRequest' }), { minItems: 1, maxItems: 1000 }),
});
export const DecisionBatch = Type.Object({ decisions: Type.Array(Decision, { maxItems: 1000 }) });

export const KeyModelsRequest = Type.Object({ secret: Type.String({ minLength: 1, maxLength: 512 }) });
export const KeyModels = Type.Union([
  Type.Object({ kind: Type.Literal('refused'), key: Nullable(KeyOwnerWire), refusal: RefusalWire }),
  Type.Object({
    kind: Type.Literal('known'),
    key: KeyOwnerWire,
    /** The active routes the key may use. */
    models: Type.Array(Type.Object({ id: Type.String(), provider: Type.String() })),
  }),
]);
export type KeyModels = Static<typeof KeyModels>;

const Count = Type.Integer({ minimum: 0 });
const Millis = Type.Number({ minimum: 0 });

/** A request-log row as a gateway measured it; its organisation and project are the key's. */
export const GatewayRow = Type.Object({
  req_id: GatewayRequestId,
  ts: Type.Integer({ minimum: 0 }),
  key_id: Id,
  model: Type.String({ maxLength: 256 }),
  status: Type.Integer({ minimum: 100, maximum: 599 }),
  stream: Type.Union([Type.Literal(0), Type.Literal(1)]),
  total_ms: Millis,
  ttft_ms: Nullable(Millis),
  tpot_ms: Nullable(Millis),
  pre_dispatch_ms: Millis,
  prompt_tokens: Nullable(Count),
  tokens_generated: Count,
  cache_creation_input_tokens: Nullable(Count),
  cache_read_input_tokens: Nullable(Count),
  total_tokens: Count,
  tokens_estimated: Type.Union([Type.Literal(0), Type.Literal(1)]),
  cost_micro: Count,
  is_byok: Type.Union([Type.Literal(0), Type.Literal(1)]),
  termination_reason: TerminationReason,
  upstream_error: Nullable(Type.String({ maxLength: 2048 })),
  upstream_model: Nullable(Type.String({ maxLength: 256 })),
  /**
   * `provider/model` of the target that served; null when none did. Absent from the rows of
   * gateways older than it, whose rows are taken all the same: absent is unknown, as null.
   */
  served_by: Type.Optional(Nullable(Type.String({ maxLength: 320 }))),
  /** The upstream attempts in the order made, at most 20; null (or absent, as above) when unknown. */
  attempts: Type.Optional(Nullable(Attempts)),
  /**
   * The gateway's API the request came in on; null when unknown. Absent from the rows of gateways
   * older than it, which served chat completions only, but whose rows are not guessed at: absent
   * is unknown, as null.
   */
  api: Type.Optional(Nullable(RequestApi)),
  user_agent: Type.String({ maxLength: 4096 }),
  /** JSON object text of at most 16 pairs of 256 characters. */
  metadata: Type.String({ maxLength: 16_384 }),
});
export type GatewayRow = Static<typeof GatewayRow>;

/**
 * Each row is checked on its own (against `GatewayRow`): the good rows of a batch are stored and
 * those refused named, so that one bad row never costs the others theirs.
 */
/** A target's breaker as a gateway sees it (server/gateway/breakers.ts's `BreakerView`). */
export const BreakerWire = Type.Object({
  target: Type.String({ minLength: 1, maxLength: 320 }),
  state: Type.Union([Type.Literal('closed'), Type.Literal('open'), Type.Literal('half_open')]),
  failures: Type.Integer({ minimum: 0 }),
  open_until: Nullable(Type.Integer({ minimum: 0 })),
});
export type BreakerWire = Static<typeof BreakerWire>;
/** The most breakers a batch reports: those not closed, of one gateway. */
export const MAX_BREAKERS = 1000;

export const RowBatch = Type.Object({
  rows: Type.Array(Type.Unknown({ description: 'a GatewayRow' }), { minItems: 1, maxItems: 5000 }),
  /**
   * Beyond the rows: the sending gateway's id (one per process) and its breakers not closed, for
   * the console's Routes screen. Taken only together; absent from gateways older than them.
   */
  gateway: Type.Optional(Id),
  breakers: Type.Optional(Type.Array(BreakerWire, { maxItems: MAX_BREAKERS })),
});
/** A row of the batch not stored, by its index, and why. */
export const RowRefused = Type.Object({ index: Count, reason: Type.String({ maxLength: 1024 }) });
export type RowRefused = Static<typeof RowRefused>;
/**
 * Answered once every row stored is committed (rows stored before, by a batch sent again, are
 * skipped); `refused` names the rows not stored (absent from control planes before it existed).
 */
export const RowsWritten = Type.Object({
  stored: Count,
  refused: Type.Optional(Type.Array(RowRefused, { maxItems: 5000 })),
});
export type RowsWritten = Static<typeof RowsWritten>;

export const GatewayStatus = Type.Object({ service: Type.Literal('gateway-control') });
