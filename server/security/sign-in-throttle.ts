/**
 * Online guessing defence (OWASP ASVS 5.0 V6.3): failures are counted per account and per
 * client address, and past a few free ones each further attempt waits a delay that doubles
 * from one second up to a ceiling. Delays rather than a lock-out: an attacker who fails on
 * purpose keeps the owner out for the current delay at most, never for good. Attempts
 * refused while waiting are not counted, so they do not lengthen the wait.
 *
 * In memory, one process: counts are lost on restart, which costs an attacker nothing they
 * could not get by waiting out the window anyway.
 */

export interface ThrottleLimits {
  /** Failed sign-ins on one account before the delays start. */
  accountFailures: number;
  /** Failed sign-ins, refreshes and external sign-ins from one address before the delays start. */
  addressFailures: number;
  /** Registrations from one address before the delays start. */
  addressRegistrations: number;
  /** A count is forgotten this long after its last delay ended. */
  windowSeconds: number;
  /** The longest delay. */
  maxDelaySeconds: number;
}

export const DEFAULT_THROTTLE: ThrottleLimits = {
  accountFailures: 5,
  addressFailures: 30,
  addressRegistrations: 20,
  windowSeconds: 900,
  maxDelaySeconds: 900,
};

interface Count {
  count: number;
  /** No attempt before this time (ms since the epoch). */
  until: number;
}

/** Beyond this many keys the least recently counted go first, so a flood of names cannot fill memory. */
const MAX_KEYS = 100_000;

/** Counts per key (an account, an address) with growing delays. */
export class Backoff {
  private readonly counts = new Map<string, Count>();

  constructor(
    private readonly free: number,
    private readonly windowMs: number,
    private readonly maxDelayMs: number,
  ) {}

  /** Milliseconds before `key` may try again; 0 when it may now. */
  waitMs(key: string, now: number): number {
    const entry = this.live(key, now);
    return entry && entry.until > now ? entry.until - now : 0;
  }

  /** Counts one more for `key`: the `free`-th count and each after it set a delay, 1 s, 2 s, 4 s… */
  add(key: string, now: number): void {
    const count = (this.live(key, now)?.count ?? 0) + 1;
    const delay = count < this.free ? 0 : Math.min(this.maxDelayMs, 1000 * 2 ** Math.min(count - this.free, 30));
    // Re-inserted so that the map's order is least recently counted first.
    this.counts.delete(key);
    this.counts.set(key, { count, until: now + delay });
    if (this.counts.size > MAX_KEYS) this.evictOne(now);
  }

  forget(key: string): void {
    this.counts.delete(key);
  }

  /**
   * Takes back one count of `key`, for an attempt counted ahead that succeeded; a delay it set
   * goes with it once the count is below the free ones again. The other counts stay, and their
   * window runs on: a caller's own successful sign-in must not wipe its failures elsewhere.
   */
  takeBack(key: string, now: number): void {
    const entry = this.counts.get(key);
    if (!entry) return;
    if (entry.count <= 1) this.counts.delete(key);
    else {
      const count = entry.count - 1;
      this.counts.set(key, { count, until: count < this.free ? Math.min(entry.until, now) : entry.until });
    }
  }

  /** The least recently counted key not waiting out a delay: evicting one that waits would lift it. */
  private evictOne(now: number): void {
    for (const [key, entry] of this.counts) {
      if (entry.until <= now) {
        this.counts.delete(key);
        return;
      }
    }
  }

  private live(key: string, now: number): Count | undefined {
    const entry = this.counts.get(key);
    if (entry && now - entry.until > this.windowMs) {
      this.counts.delete(key);
      return undefined;
    }
    return entry;
  }
}

/** The three counters the auth routes share. */
export class SignInThrottle {
  readonly accounts: Backoff;
  readonly addresses: Backoff;
  readonly registrations: Backoff;

  constructor(limits: ThrottleLimits) {
    const windowMs = limits.windowSeconds * 1000;
    const maxDelayMs = limits.maxDelaySeconds * 1000;
    this.accounts = new Backoff(limits.accountFailures, windowMs, maxDelayMs);
    this.addresses = new Backoff(limits.addressFailures, windowMs, maxDelayMs);
    this.registrations = new Backoff(limits.addressRegistrations, windowMs, maxDelayMs);
  }
}

/** Whole seconds to wait, as `Retry-After` says it: rounded up, at least 1. */
export const retryAfterSeconds = (waitMs: number): number => Math.max(1, Math.ceil(waitMs / 1000));
