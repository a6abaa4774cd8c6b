import type { RequestApi } from '../../schemas/request-log.js';

/** A request-log row as the telemetry store keeps it: times in epoch ms, cost in micro-PKR. */
export interface RequestRecord {
  req_id: string;
  ts: number;
  org_id: string;
  project_id: string | null;
  key_id: string | null;
  model: string;
  status: number;
  stream: 0 | 1;
  total_ms: number;
  ttft_ms: number | null;
  tpot_ms: number | null;
  pre_dispatch_ms: number;
  prompt_tokens: number | null;
  tokens_generated: number;
  cache_creation_input_tokens: number | null;
  cache_read_input_tokens: number | null;
  total_tokens: number;
  tokens_estimated: 0 | 1;
  cost_micro: number;
  is_byok: 0 | 1;
  termination_reason: string;
  upstream_error: string | null;
  upstream_model: string | null;
  /** `provider/model` of the target that served; null when none did, or unknown. */
  served_by: string | null;
  /** JSON array text of the request's upstream attempts (`Attempt`, at most 20); null when unknown. */
  attempts: string | null;
  /** The gateway's API the request came in on (`chat`, `messages`, …); null when unknown. */
  api: RequestApi | null;
  user_agent: string;
  /** JSON object text, keys lowercased. */
  metadata: string;
}

export const REQUEST_COLUMNS = [
  'req_id',
  'ts',
  'org_id',
  'project_id',
  'key_id',
  'model',
  'status',
  'stream',
  'total_ms',
  'ttft_ms',
  'tpot_ms',
  'pre_dispatch_ms',
  'prompt_tokens',
  'tokens_generated',
  'cache_creation_input_tokens',
  'cache_read_input_tokens',
  'total_tokens',
  'tokens_estimated',
  'cost_micro',
  'is_byok',
  'termination_reason',
  'upstream_error',
  'upstream_model',
  'served_by',
  'attempts',
  'api',
  'user_agent',
  'metadata',
] as const satisfies readonly (keyof RequestRecord)[];

/**
 * A record's values as a tuple typed column by column: a column added to `REQUEST_COLUMNS`
 * but not to `requestValues`, or listed in another place, is a type error where it can be.
 */
type ValuesOf<Columns extends readonly (keyof RequestRecord)[]> = {
  -readonly [I in keyof Columns]: RequestRecord[Columns[I]];
};
export type RequestValues = ValuesOf<typeof REQUEST_COLUMNS>;

/**
 * A record's values in `REQUEST_COLUMNS` order, as an import's batches collect them
 * (request-columns.ts) for an insert with positional parameters: binding 25 named ones
 * costs an import ~2 µs a row more. Listed out, not mapped over the column names: a keyed
 * read per column costs about as much again.
 */
export function requestValues(r: RequestRecord): RequestValues {
  return [
    r.req_id,
    r.ts,
    r.org_id,
    r.project_id,
    r.key_id,
    r.model,
    r.status,
    r.stream,
    r.total_ms,
    r.ttft_ms,
    r.tpot_ms,
    r.pre_dispatch_ms,
    r.prompt_tokens,
    r.tokens_generated,
    r.cache_creation_input_tokens,
    r.cache_read_input_tokens,
    r.total_tokens,
    r.tokens_estimated,
    r.cost_micro,
    r.is_byok,
    r.termination_reason,
    r.upstream_error,
    r.upstream_model,
    r.served_by,
    r.attempts,
    r.api,
    r.user_agent,
    r.metadata,
  ];
}

/** The record of values in `REQUEST_COLUMNS` order: `requestValues` undone. */
export function requestRecord(v: RequestValues): RequestRecord {
  return {
    req_id: v[0],
    ts: v[1],
    org_id: v[2],
    project_id: v[3],
    key_id: v[4],
    model: v[5],
    status: v[6],
    stream: v[7],
    total_ms: v[8],
    ttft_ms: v[9],
    tpot_ms: v[10],
    pre_dispatch_ms: v[11],
    prompt_tokens: v[12],
    tokens_generated: v[13],
    cache_creation_input_tokens: v[14],
    cache_read_input_tokens: v[15],
    total_tokens: v[16],
    tokens_estimated: v[17],
    cost_micro: v[18],
    is_byok: v[19],
    termination_reason: v[20],
    upstream_error: v[21],
    upstream_model: v[22],
    served_by: v[23],
    attempts: v[24],
    api: v[25],
    user_agent: v[26],
    metadata: v[27],
  };
}
