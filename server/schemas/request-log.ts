import { Type, type Static } from '@sinclair/typebox';
import { Nullable } from './common.js';

export const TerminationReason = Type.Union([
  Type.Literal('success'),
  Type.Literal('proxy_guillotine'),
  Type.Literal('client_disconnect'),
  Type.Literal('upstream_stream_aborted'),
]);

/**
 * The gateway's APIs, as a request-log row names the one its request came in on: OpenAI's chat
 * completions (`chat`), Anthropic's Messages (`messages`) and its token counting
 * (`/v1/messages/count_tokens`, `count_tokens`), OpenAI's Responses (`responses`) and
 * embeddings (`embeddings`). A row that does not say (written before the gateway recorded it,
 * imported without it) has null: unknown, never taken for chat.
 */
export const REQUEST_APIS = ['chat', 'messages', 'count_tokens', 'responses', 'embeddings'] as const;
export type RequestApi = (typeof REQUEST_APIS)[number];
export const RequestApi = Type.Union(REQUEST_APIS.map((api) => Type.Literal(api)));

/** Whether `text` names one of the gateway's APIs. */
export const isRequestApi = (text: string): text is RequestApi => (REQUEST_APIS as readonly string[]).includes(text);

/**
 * Beyond the contract: a request-log row's `api`, in the API and an import file alike. Optional
 * here because a control plane with only the contract's fields leaves it out, and an import line
 * may too (stored as null); this one always sends it.
 */
export const RowApi = Type.Optional(
  Type.Union([...REQUEST_APIS.map((api) => Type.Literal(api)), Type.Null()], {
    description: `Beyond the contract: the gateway's API the request came in on (${REQUEST_APIS.join(', ')}); null when unknown (rows written before the gateway recorded it, imports that do not say)`,
  }),
);

const Count = Type.Integer({ minimum: 0 });
const Millis = Type.Number({ minimum: 0 });

export const RequestMetrics = Type.Object({
  total_ms: Millis,
  ttft_ms: Nullable(Millis),
  tpot_ms: Nullable(Millis),
  pre_dispatch_ms: Millis,
  prompt_tokens: Nullable(Count),
  tokens_generated: Count,
  cache_creation_input_tokens: Nullable(Count),
  cache_read_input_tokens: Nullable(Count),
  total_tokens: Count,
  tokens_estimated: Type.Boolean(),
});

export const RequestFinancials = Type.Object({
  cost_pkr: Type.Number({ minimum: 0 }),
  is_byok: Type.Union([Type.Literal(0), Type.Literal(1)]),
});

export const RequestStatusDetail = Type.Object({
  termination_reason: TerminationReason,
  upstream_error: Nullable(Type.String()),
});

/** What the gateway made of an attempt's outcome. */
export const AttemptDecision = Type.Union([
  Type.Literal('served'), // its answer went to the caller (an error the caller caused included)
  Type.Literal('retried'), // failed; the same target was tried again
  Type.Literal('next'), // failed; the next target was tried
  Type.Literal('gave_up'), // failed, and nothing was left to try within the deadline and the attempts
  Type.Literal('skipped'), // not tried: its breaker was open, or it cannot serve the request
]);
export type AttemptDecision = Static<typeof AttemptDecision>;

/**
 * One upstream attempt of a gateway request, in the order made. `error` is a class, never an
 * upstream's text (that is `upstream_error`'s, for the last failure): `connect`, `reset`,
 * `timeout`, `first_byte_timeout`, `server_error`, `rate_limited`, `context_length`,
 * `content_policy`, `platform_key`, `stream_error`, `stream_cut`, `stream_stalled`, `breaker_open`,
 * `unsupported`, `client`; null when the attempt succeeded.
 */
export const Attempt = Type.Object({
  /** `provider/model` as the routes document names the target. */
  target: Type.String({ maxLength: 320 }),
  /** The upstream's HTTP status; null when none came (no connection, no answer in time, skipped). */
  status: Nullable(Type.Integer({ minimum: 100, maximum: 599 })),
  error: Nullable(Type.String({ maxLength: 32 })),
  ms: Type.Number({ minimum: 0 }),
  decision: AttemptDecision,
});
export type Attempt = Static<typeof Attempt>;

/** The most attempts a row keeps: a gateway's, an import's and the API's alike. */
export const MAX_ATTEMPTS = 20;
export const Attempts = Type.Array(Attempt, { maxItems: MAX_ATTEMPTS });

/**
 * What served a request: `model` the upstream model that served (the contract's field), then,
 * beyond the contract, `provider` (the provider of the target that served, null when none did
 * or the row does not say) and `attempts` (every upstream attempt in order, null when unknown).
 * Both are optional here because a control plane with only the contract's fields leaves them
 * out; this one always sends them.
 */
export const Upstream = Type.Object({
  model: Type.String(),
  /** A provider id of the routes document; never holds `/`, which ends it in `served_by`. */
  provider: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 64, pattern: '^[^/]+$' }))),
  attempts: Type.Optional(Nullable(Attempts)),
});
export type Upstream = Static<typeof Upstream>;

/** What a request-log row records of the request's outcome: the same in the import file and the API. */
export const RequestOutcomeFields = {
  metrics: RequestMetrics,
  financials: RequestFinancials,
  status_detail: RequestStatusDetail,
  upstream: Nullable(Upstream),
  user_agent: Type.String(),
  metadata: Type.Record(Type.String(), Type.String()),
};

const Reference = Type.Object({ id: Type.String() });

/** One line of an `import-requests` file: a request-log row whose key and project are given by id. */
export const ImportedRequest = Type.Object({
  req_id: Type.String({ minLength: 1, maxLength: 200 }),
  timestamp: Type.String(),
  model: Type.String({ minLength: 1, maxLength: 200 }),
  status: Type.Integer({ minimum: 100, maximum: 599 }),
  stream: Type.Boolean(),
  api: RowApi,
  key: Nullable(Reference),
  project: Nullable(Reference),
  organization_name: Type.Optional(Type.String()),
  ...RequestOutcomeFields,
});
export type ImportedRequest = Static<typeof ImportedRequest>;
