import { performance } from 'node:perf_hooks';

/** What a target's breaker lets through now. */
export type Passage = { kind: 'pass' } | { kind: 'probe' } | { kind: 'open'; untilMs: number };

/** A target's breaker as the console shows it; `open_until` in epoch ms. */
export interface BreakerView {
  target: string;
  state: 'closed' | 'open' | 'half_open';
  /** Failures in a row so far. */
  failures: number;
  open_until: number | null;
}

interface Breaker {
  failures: number;
  /** performance.now() until which no traffic goes there; 0 when closed. */
  openUntil: number;
  /** A probe is out: nothing else goes until it comes back. */
  probing: boolean;
  /** Probes failed in a row: each doubles the next cooldown, up to MAX_COOLDOWN_FACTOR. */
  failedProbes: number;
  /** performance.now() until which the target asked for no more (a 429's `Retry-After`): others go first. */
  limitedUntil: number;
}

/** A target that keeps failing its probes is probed at most this many cooldowns apart. */
const MAX_COOLDOWN_FACTOR = 8;

/**
 * A circuit breaker per target (`provider/model`), in this gateway's memory: after
 * `breaker_failures` failures in a row, no traffic goes to the target for a cooldown; then one
 * request probes it (half open) while the others keep away, and its success closes the breaker.
 * A failed probe opens it again for twice as long (up to eight cooldowns), so a target down for
 * good costs its route one attempt per several cooldowns. Cheap on the request path: a map read.
 */
export class Breakers {
  private readonly breakers = new Map<string, Breaker>();

  constructor(
    private readonly now: () => number = () => performance.now(),
    /** Epoch ms at `now()` = 0, for what the console shows. */
    private readonly epochAt: () => number = () => Date.now() - performance.now(),
  ) {}

  /** Whether a request may go to `target` now; a `probe` must be answered by succeeded/failed/released. */
  take(target: string): Passage {
    const breaker = this.breakers.get(target);
    if (!breaker || breaker.openUntil === 0) return { kind: 'pass' };
    if (this.now() < breaker.openUntil || breaker.probing) return { kind: 'open', untilMs: breaker.openUntil };
    breaker.probing = true;
    return { kind: 'probe' };
  }

  /**
   * Whether `target` takes traffic now (closed, or its cooldown over and no probe out) and has not
   * asked for less: without taking a probe's turn. Such a target keeps its place in the order, so
   * that the probe is sent at all.
   */
  healthy(target: string): boolean {
    const breaker = this.breakers.get(target);
    if (!breaker) return true;
    const now = this.now();
    const takes = breaker.openUntil === 0 || (now >= breaker.openUntil && !breaker.probing);
    return takes && now >= breaker.limitedUntil;
  }

  /** The target asked for no requests for `forMs` (`Retry-After`): other targets go before it till then. */
  limited(target: string, forMs: number): void {
    this.breakerOf(target).limitedUntil = this.now() + forMs;
  }

  private breakerOf(target: string): Breaker {
    let breaker = this.breakers.get(target);
    if (!breaker) {
      breaker = { failures: 0, openUntil: 0, probing: false, failedProbes: 0, limitedUntil: 0 };
      this.breakers.set(target, breaker);
    }
    return breaker;
  }

  succeeded(target: string): void {
    this.breakers.delete(target);
  }

  /**
   * A failure of the target's own making. `openForMs`: open at once for that long, whatever the
   * count (the platform's key refused).
   */
  failed(
    target: string,
    settings: { breaker_failures: number; breaker_cooldown_ms: number },
    openForMs?: number,
  ): void {
    const breaker = this.breakerOf(target);
    breaker.failures += 1;
    const wasProbe = breaker.probing;
    breaker.probing = false;
    if (wasProbe) breaker.failedProbes += 1;
    if (openForMs !== undefined) {
      breaker.openUntil = this.now() + openForMs;
    } else if (wasProbe || breaker.failures >= settings.breaker_failures) {
      const factor = Math.min(MAX_COOLDOWN_FACTOR, 2 ** breaker.failedProbes);
      breaker.openUntil = this.now() + settings.breaker_cooldown_ms * factor;
    }
  }

  /** An attempt that ended for nothing the target did (the caller left): a probe may go again. */
  released(target: string): void {
    const breaker = this.breakers.get(target);
    if (breaker) breaker.probing = false;
  }

  /** Every target not closed. */
  view(): BreakerView[] {
    const now = this.now();
    const epoch = this.epochAt();
    return [...this.breakers].map(([target, breaker]) => ({
      target,
      state: breaker.openUntil === 0 ? 'closed' : now < breaker.openUntil && !breaker.probing ? 'open' : 'half_open',
      failures: breaker.failures,
      open_until: breaker.openUntil === 0 ? null : Math.round(epoch + breaker.openUntil),
    }));
  }
}
