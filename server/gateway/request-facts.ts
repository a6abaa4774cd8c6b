import type { FastifyRequest } from 'fastify';
import { clipped } from '../admission/text-bounds.js';
import { attemptsText } from '../domain/attempts.js';
import { isRequestApi, MAX_ATTEMPTS, type Attempt, type RequestApi } from '../schemas/request-log.js';
import type { RequestRecord } from '../stores/telemetry/request-record.js';

const META_PREFIX = 'x-svc-meta-';
const META_PAIRS = 16;
const META_CHARACTERS = 256;

/**
 * `X-SVC-Meta-<Name>: value` headers as the row's metadata: names lower-cased, values verbatim,
 * at most 16 pairs (in the order sent) of at most 256 characters each (decisions.md).
 */
export function metadataOf(request: FastifyRequest): Record<string, string> {
  // No prototype: a header named X-SVC-Meta-Constructor is a key like any other.
  const metadata: Record<string, string> = Object.create(null) as Record<string, string>;
  let pairs = 0;
  const raw = request.raw.rawHeaders;
  for (let i = 0; i + 1 < raw.length && pairs < META_PAIRS; i += 2) {
    const name = raw[i]!.toLowerCase();
    if (!name.startsWith(META_PREFIX) || name.length === META_PREFIX.length) continue;
    const key = name.slice(META_PREFIX.length).slice(0, META_CHARACTERS);
    if (key in metadata) continue;
    metadata[key] = raw[i + 1]!.slice(0, META_CHARACTERS);
    pairs++;
  }
  return metadata;
}

export const estimatedTokens = (characters: number) => Math.max(1, Math.ceil(characters / 4));

/**
 * The parts of a row known when the request arrives; the rest is measured as it is served. Its
 * API is always known here: the path it came in on says it.
 */
export type RowStart = Pick<
  RequestRecord,
  'req_id' | 'ts' | 'model' | 'stream' | 'user_agent' | 'metadata' | 'org_id' | 'project_id' | 'key_id'
> & { api: RequestApi };

/**
 * What is measured of a request as it is served: the rest of its row, its upstream attempts as
 * made (null when unknown), which `gatewayRow` fits to the log's bounds and writes as the row's text.
 */
export type Served = Omit<RequestRecord, keyof RowStart | 'attempts'> & { attempts: readonly Attempt[] | null };

/**
 * A request's row, its fields written out one by one: V8 makes `{ ...start, status, … }` with
 * this many fields a new hidden class per row, tens of microseconds each (measured: 35 µs against
 * 0.2 µs), on every request's path.
 */
export function gatewayRow(start: RowStart, served: Served): RequestRecord {
  return {
    req_id: start.req_id,
    ts: start.ts,
    org_id: start.org_id,
    project_id: start.project_id,
    key_id: start.key_id,
    model: start.model,
    status: served.status,
    stream: start.stream,
    total_ms: toMicros(served.total_ms),
    ttft_ms: served.ttft_ms === null ? null : toMicros(served.ttft_ms),
    tpot_ms: served.tpot_ms === null ? null : toMicros(served.tpot_ms),
    pre_dispatch_ms: toMicros(served.pre_dispatch_ms),
    prompt_tokens: served.prompt_tokens,
    tokens_generated: served.tokens_generated,
    cache_creation_input_tokens: served.cache_creation_input_tokens,
    cache_read_input_tokens: served.cache_read_input_tokens,
    total_tokens: served.total_tokens,
    tokens_estimated: served.tokens_estimated,
    cost_micro: served.cost_micro,
    is_byok: served.is_byok,
    termination_reason: served.termination_reason,
    upstream_error: served.upstream_error,
    upstream_model: served.upstream_model,
    served_by: served.served_by,
    attempts: served.attempts === null ? null : attemptsText(fitAttempts(served.attempts)),
    api: start.api,
    user_agent: start.user_agent,
    metadata: start.metadata,
  };
}

/**
 * A time to the microsecond, finer than anything the log shows: the store keeps a whole number of
 * microseconds in one to four bytes, any other time in eight (018_compact_timings.sql).
 */
const toMicros = (ms: number): number => Math.round(ms * 1000) / 1000;

/** A request refused before dispatch: nothing generated, nothing billed. */
export function refusalRow(start: RowStart, status: number, totalMs: number): RequestRecord {
  return gatewayRow(start, {
    status,
    total_ms: totalMs,
    ttft_ms: null,
    tpot_ms: null,
    pre_dispatch_ms: totalMs,
    prompt_tokens: 0,
    tokens_generated: 0,
    cache_creation_input_tokens: null,
    cache_read_input_tokens: null,
    total_tokens: 0,
    tokens_estimated: 0,
    cost_micro: 0,
    is_byok: 0,
    termination_reason: 'success',
    upstream_error: null,
    upstream_model: null,
    served_by: null,
    attempts: null,
  });
}

/**
 * The longest text each field of a row may hold: what the internal API takes
 * (server/schemas/gateway-internal.ts), so that a row a gateway makes is never refused there.
 */
export const ROW_TEXT_LIMITS = {
  model: 256,
  upstream_error: 2048,
  upstream_model: 256,
  /** A target's `provider/model`, as an attempt's `target` (server/schemas/request-log.ts). */
  served_by: 320,
  user_agent: 4096,
  metadata: 16_384,
} as const;

/** An attempt's longest error class (`Attempt`). */
const ATTEMPT_ERROR = 32;

const validStatus = (status: number | null): boolean =>
  status === null || (Number.isInteger(status) && status >= 100 && status <= 599);

const attemptFits = (attempt: Attempt): boolean =>
  attempt.target.length <= ROW_TEXT_LIMITS.served_by &&
  (attempt.error?.length ?? 0) <= ATTEMPT_ERROR &&
  validStatus(attempt.status) &&
  Number.isFinite(attempt.ms) &&
  attempt.ms >= 0;

/**
 * Attempts as the log takes them: at most `MAX_ATTEMPTS` (past that, the first ones and the last,
 * which says how the request ended), texts cut to their bounds, a status outside HTTP's range
 * unknown, a duration finite. The same array when it fits, as nearly every one does.
 */
export function fitAttempts(attempts: readonly Attempt[]): readonly Attempt[] {
  const kept = attempts.length <= MAX_ATTEMPTS ? attempts : [...attempts.slice(0, MAX_ATTEMPTS - 1), attempts.at(-1)!];
  if (kept.every(attemptFits)) return kept;
  return kept.map((attempt) => ({
    target: clipped(attempt.target, ROW_TEXT_LIMITS.served_by),
    status: validStatus(attempt.status) ? attempt.status : null,
    error: attempt.error === null ? null : clipped(attempt.error, ATTEMPT_ERROR),
    ms: ms(attempt.ms),
    decision: attempt.decision,
  }));
}

const count = (value: number): number =>
  Number.isFinite(value) && value > 0 ? Math.min(Math.round(value), Number.MAX_SAFE_INTEGER) : 0;
const countOrNull = (value: number | null): number | null => (value === null ? null : count(value));
const ms = (value: number): number => (Number.isFinite(value) && value > 0 ? value : 0);
const msOrNull = (value: number | null): number | null =>
  value === null || !Number.isFinite(value) ? null : ms(value);

/**
 * A row every one of whose fields the request log takes: texts cut to their limits, figures
 * finite and whole where they count. A caller's User-Agent of 5 kB or an upstream's odd usage
 * must not cost the call its row (and its charge): a row refused is a call served for nothing.
 * Its attempts were fitted when `gatewayRow` wrote them (`fitAttempts`), as objects: read back
 * from their text here, every row would pay a parse on the request path. An API the log does not
 * know (`RequestApi`) is unknown, null, rather than a row the control plane would refuse.
 */
export function fitRow(row: RequestRecord): RequestRecord {
  const fits =
    row.model.length <= ROW_TEXT_LIMITS.model &&
    row.user_agent.length <= ROW_TEXT_LIMITS.user_agent &&
    row.metadata.length <= ROW_TEXT_LIMITS.metadata &&
    (row.upstream_error?.length ?? 0) <= ROW_TEXT_LIMITS.upstream_error &&
    (row.upstream_model?.length ?? 0) <= ROW_TEXT_LIMITS.upstream_model &&
    (row.served_by?.length ?? 0) <= ROW_TEXT_LIMITS.served_by &&
    (row.api === null || isRequestApi(row.api)) &&
    Number.isSafeInteger(row.ts) &&
    Number.isFinite(row.total_ms) &&
    Number.isFinite(row.pre_dispatch_ms) &&
    (row.ttft_ms === null || Number.isFinite(row.ttft_ms)) &&
    (row.tpot_ms === null || Number.isFinite(row.tpot_ms)) &&
    Number.isSafeInteger(row.cost_micro) &&
    Number.isSafeInteger(row.total_tokens) &&
    Number.isSafeInteger(row.tokens_generated) &&
    (row.prompt_tokens === null || Number.isSafeInteger(row.prompt_tokens));
  // The common case costs a few comparisons: nearly every row fits as it is.
  if (fits && row.cost_micro >= 0 && row.total_tokens >= 0 && row.tokens_generated >= 0) return row;
  return {
    ...row,
    ts: count(row.ts),
    model: clipped(row.model, ROW_TEXT_LIMITS.model),
    user_agent: clipped(row.user_agent, ROW_TEXT_LIMITS.user_agent),
    // Metadata is JSON: cut, it would no longer be; too long, it is dropped whole.
    metadata: row.metadata.length <= ROW_TEXT_LIMITS.metadata ? row.metadata : '{}',
    upstream_error: row.upstream_error === null ? null : clipped(row.upstream_error, ROW_TEXT_LIMITS.upstream_error),
    upstream_model: row.upstream_model === null ? null : clipped(row.upstream_model, ROW_TEXT_LIMITS.upstream_model),
    served_by: row.served_by === null ? null : clipped(row.served_by, ROW_TEXT_LIMITS.served_by),
    api: row.api !== null && isRequestApi(row.api) ? row.api : null,
    total_ms: ms(row.total_ms),
    ttft_ms: msOrNull(row.ttft_ms),
    tpot_ms: msOrNull(row.tpot_ms),
    pre_dispatch_ms: ms(row.pre_dispatch_ms),
    prompt_tokens: countOrNull(row.prompt_tokens),
    tokens_generated: count(row.tokens_generated),
    cache_creation_input_tokens: countOrNull(row.cache_creation_input_tokens),
    cache_read_input_tokens: countOrNull(row.cache_read_input_tokens),
    total_tokens: count(row.total_tokens),
    cost_micro: count(row.cost_micro),
  };
}
