/**
 * What the gateway makes of each way an attempt can fail before anything reached the caller: the
 * README's table "What the gateway does on each failure" is this file in words. The attempt loop
 * (failover.ts) applies it; nothing else decides.
 */

export type FailureClass =
  | 'connect' // refused, no route, DNS: nothing listens there
  | 'reset' // the connection dropped before an answer
  | 'timeout' // a non-streamed answer not in by `answer_timeout_ms`
  | 'first_byte_timeout' // a stream's first content not in by `first_byte_timeout_ms`
  | 'server_error' // 5xx
  | 'rate_limited' // 429
  | 'context_length' // 400: the prompt does not fit this model
  | 'content_policy' // 400: the provider's policy refused it
  | 'platform_key' // 401/403 on the platform's key: the operator's to fix
  | 'stream_error' // an error event before any content
  | 'stream_cut' // the stream ended before any content and without [DONE]
  | 'client'; // any other 4xx: the caller's request, returned as it is

export interface Policy {
  /** Tried again on the same target (after a backoff), within `retries`. */
  sameTarget: boolean;
  /** Worth the next target. */
  nextTarget: boolean;
  /** A failure of the target's: it counts towards its breaker. */
  breaker: boolean;
}

const POLICIES: Record<FailureClass, Policy> = {
  connect: { sameTarget: false, nextTarget: true, breaker: true },
  reset: { sameTarget: true, nextTarget: true, breaker: true },
  timeout: { sameTarget: false, nextTarget: true, breaker: true },
  first_byte_timeout: { sameTarget: false, nextTarget: true, breaker: true },
  server_error: { sameTarget: true, nextTarget: true, breaker: true },
  // Waited out on the same target only when no other target can serve (see failover.ts).
  rate_limited: { sameTarget: true, nextTarget: true, breaker: true },
  // Another model may have a longer context; the same model never will.
  context_length: { sameTarget: false, nextTarget: true, breaker: false },
  content_policy: { sameTarget: false, nextTarget: false, breaker: false },
  platform_key: { sameTarget: false, nextTarget: true, breaker: true },
  stream_error: { sameTarget: true, nextTarget: true, breaker: true },
  stream_cut: { sameTarget: true, nextTarget: true, breaker: true },
  client: { sameTarget: false, nextTarget: false, breaker: false },
};

export const policyOf = (failure: FailureClass): Policy => POLICIES[failure];

const CONTEXT_LENGTH = /context_length_exceeded|context length|maximum context|too many tokens|prompt is too long/i;
const CONTENT_POLICY = /content_policy|content_filter|content management policy|safety system/i;

/**
 * The class of an upstream's answer of `status` (not 2xx) with body `text`. `isByok`: sent on the
 * organisation's own key, whose refusal is the caller's to hear of, as it is.
 */
export function classifyStatus(status: number, text: string, isByok: boolean): FailureClass {
  if (status === 429) return 'rate_limited';
  if (status >= 500 || status < 400) return 'server_error';
  if ((status === 401 || status === 403) && !isByok) return 'platform_key';
  if (status === 400 || status === 413 || status === 422) {
    // The code alone is searched where there is one: a message may quote the caller's prompt.
    const code = /"code"\s*:\s*"([^"]{1,100})"/.exec(text)?.[1] ?? text.slice(0, 2000);
    if (CONTEXT_LENGTH.test(code)) return 'context_length';
    if (CONTENT_POLICY.test(code)) return 'content_policy';
  }
  return 'client';
}

/** Codes of a connection nothing answered on: the next target at once, never this one again. */
const NOT_LISTENING = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'UND_ERR_CONNECT_TIMEOUT',
]);

/** The class of an error thrown while reaching the upstream or reading its answer's head. */
export function classifyError(error: unknown): 'connect' | 'reset' {
  const code = (error as { code?: unknown; cause?: { code?: unknown } }).code;
  const causeCode = (error as { cause?: { code?: unknown } }).cause?.code;
  return NOT_LISTENING.has(String(code)) || NOT_LISTENING.has(String(causeCode)) ? 'connect' : 'reset';
}

/**
 * A `Retry-After` in milliseconds from now (seconds or an HTTP date), or null when absent or
 * unreadable.
 */
export function retryAfterMs(value: string | undefined, nowEpochMs: number): number | null {
  if (value === undefined) return null;
  if (/^\d{1,6}$/.test(value)) return Number(value) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, at - nowEpochMs);
}

/** What the caller gets when every attempt failed with `failure` and nothing was answered upstream. */
export function unansweredStatus(failure: FailureClass): { status: number; message: string } {
  switch (failure) {
    case 'connect':
      return { status: 502, message: 'The upstream could not be reached.' };
    case 'timeout':
    case 'first_byte_timeout':
      return { status: 504, message: 'The upstream did not answer in time.' };
    case 'stream_cut':
      return { status: 502, message: 'The upstream ended its stream before any content.' };
    default:
      return { status: 502, message: 'The upstream connection failed before an answer.' };
  }
}
