import { Type, type Static } from '@sinclair/typebox';
import { Nullable } from './common.js';

export const TerminationReason = Type.Union([
  Type.Literal('success'),
  Type.Literal('proxy_guillotine'),
  Type.Literal('client_disconnect'),
  Type.Literal('upstream_stream_aborted'),
]);

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

/** What a request-log row records of the request's outcome: the same in the import file and the API. */
export const RequestOutcomeFields = {
  metrics: RequestMetrics,
  financials: RequestFinancials,
  status_detail: RequestStatusDetail,
  upstream: Nullable(Type.Object({ model: Type.String() })),
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
  key: Nullable(Reference),
  project: Nullable(Reference),
  organization_name: Type.Optional(Type.String()),
  ...RequestOutcomeFields,
});
export type ImportedRequest = Static<typeof ImportedRequest>;
