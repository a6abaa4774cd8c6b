import type { FastifyRequest } from 'fastify';
import { tooManyRequests } from '../http-errors.js';
import { retryAfterSeconds, type Backoff } from '../security/sign-in-throttle.js';

/** "8 seconds", "15 minutes": how long to wait, as the console shows it. */
function waitWords(seconds: number): string {
  if (seconds < 120) return `${seconds} second${seconds === 1 ? '' : 's'}`;
  return `${Math.ceil(seconds / 60)} minutes`;
}

/**
 * Refuses with 429 and `Retry-After` while any of `counters` makes its key wait, and logs it
 * at warn with `who` (the account typed and the client address). Call before the credentials
 * are checked, so that a throttled attempt learns nothing about them.
 */
export function holdOff(
  request: FastifyRequest,
  now: number,
  counters: ReadonlyArray<readonly [Backoff, string]>,
  refusal: string,
  who: Record<string, string>,
): void {
  const waitMs = Math.max(0, ...counters.map(([counter, key]) => counter.waitMs(key, now)));
  if (waitMs === 0) return;
  const seconds = retryAfterSeconds(waitMs);
  request.log.warn({ ...who, retry_after_s: seconds }, `throttled: ${refusal}`);
  throw tooManyRequests(`${refusal}: try again in ${waitWords(seconds)}`, seconds);
}
