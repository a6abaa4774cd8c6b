import type { RequestRow } from './request-row.js';

/**
 * A request's upstream attempts in words: what went wrong with one (its error class) and what the
 * gateway made of it (its decision). The classes are the server's (`Attempt` in
 * server/schemas/request-log.ts); a class this console does not know yet is shown as it is.
 */

export type Attempt = NonNullable<NonNullable<RequestRow['upstream']>['attempts']>[number];
export type AttemptDecision = Attempt['decision'];

const ERRORS: Readonly<Record<string, string>> = {
  connect: 'could not connect',
  reset: 'connection reset',
  timeout: 'no answer in time',
  first_byte_timeout: 'no first byte in time',
  server_error: 'server error',
  rate_limited: 'rate limited',
  context_length: 'prompt too long for the model',
  content_policy: 'refused by content policy',
  platform_key: 'platform key refused',
  stream_error: 'error event in the stream',
  stream_cut: 'stream cut off',
  stream_stalled: 'stream stalled',
  breaker_open: 'breaker open',
  unsupported: 'cannot serve this request',
  client: 'the caller’s error',
};

/** An attempt's error class in words; the class itself when it is not one of the known ones. */
export function attemptErrorWords(error: string): string {
  return Object.hasOwn(ERRORS, error) ? ERRORS[error]! : error;
}

const DECISIONS: Readonly<Record<AttemptDecision, string>> = {
  served: 'served',
  retried: 'retried on the same target',
  next: 'moved to the next target',
  gave_up: 'gave up',
  skipped: 'skipped',
};

/**
 * What the gateway made of an attempt, in words. A target is skipped because its breaker was open
 * (said so) or because it cannot serve the request (its error says that).
 */
export function attemptDecisionWords(decision: AttemptDecision, error: string | null): string {
  if (decision === 'skipped') {
    return error === null || error === 'breaker_open'
      ? 'skipped: breaker open'
      : `skipped: ${attemptErrorWords(error)}`;
  }
  return DECISIONS[decision];
}
