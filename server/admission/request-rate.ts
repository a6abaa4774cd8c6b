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
/** A key's request times in the window, oldest first, from `head` on. */
interface Window {
  times: number[];
  head: number;
}

export class RequestRate {
  private readonly recent = new Map<string, Window>();

  /** Counts a request of `keyId` at `now` unless the window is full; a refused one is not counted. */
  take(keyId: string, limit: number, now: number): RateVerdict {
    let window = this.recent.get(keyId);
    if (!window) this.recent.set(keyId, (window = { times: [], head: 0 }));
    const { times } = window;
    // Expired times are stepped over, not spliced out: a busy key's minute holds tens of thousands.
    while (window.head < times.length && times[window.head]! <= now - WINDOW_MS) window.head++;
    if (window.head > 1024 && window.head * 2 > times.length) {
      times.splice(0, window.head);
      window.head = 0;
    }
    const count = times.length - window.head;
    const resetMs = count > 0 ? times[window.head]! + WINDOW_MS - now : WINDOW_MS;
    if (count >= limit) return { allowed: false, remaining: 0, resetMs };
    times.push(now);
    return { allowed: true, remaining: limit - count - 1, resetMs };
  }

  /** Forgets the keys with no request in the window at `now`; returns how many. */
  forgetIdle(now: number): number {
    let forgotten = 0;
    for (const [keyId, { times }] of this.recent) {
      if (times.length === 0 || times[times.length - 1]! <= now - WINDOW_MS) {
        this.recent.delete(keyId);
        forgotten++;
      }
    }
    return forgotten;
  }
}
