/** A key's requests of the last minute, as `rate_limit_rpm` counts them (a sliding window). */
export interface RateVerdict {
  allowed: boolean;
  /** Requests left in the window after this one. */
  remaining: number;
  /** Milliseconds until the oldest request of the window leaves it. */
  resetMs: number;
}

const WINDOW_MS = 60_000;

/**
 * In the control plane's memory: every gateway, in its process or elsewhere, asks it, so that
 * one count holds across all of them.
 */
export class RequestRate {
  private readonly recent = new Map<string, number[]>();

  /** Counts a request of `keyId` at `now` unless the window is full; a refused one is not counted. */
  take(keyId: string, limit: number, now: number): RateVerdict {
    let times = this.recent.get(keyId);
    if (!times) this.recent.set(keyId, (times = []));
    let expired = 0;
    while (expired < times.length && times[expired]! <= now - WINDOW_MS) expired++;
    if (expired > 0) times.splice(0, expired);
    const resetMs = times.length > 0 ? times[0]! + WINDOW_MS - now : WINDOW_MS;
    if (times.length >= limit) return { allowed: false, remaining: 0, resetMs };
    times.push(now);
    return { allowed: true, remaining: limit - times.length, resetMs };
  }
}
