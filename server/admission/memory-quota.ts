import type { AdmissionQuota, QuotaAsk, QuotaVerdict } from '../stores/control/admission-quota.js';
import { CreditHolds } from './credit-holds.js';
import { RequestRate } from './request-rate.js';

/**
 * The quota in the control plane's memory, for a store one process serves (SQLite): every
 * gateway, in its process or elsewhere, asks this process, so one count holds across all of them.
 * `take` decides without awaiting anything, so two requests of one key never both pass the credit
 * check on the same headroom.
 */
export class MemoryQuota implements AdmissionQuota {
  private readonly rate = new RequestRate();
  private readonly holds = new CreditHolds();

  get releases(): number {
    return this.holds.releases;
  }

  releasedSince(keyId: string, since: number): boolean {
    return this.holds.releasedSince(keyId, since);
  }

  take(ask: QuotaAsk): Promise<QuotaVerdict> {
    const rate = this.rate.take(ask.keyId, ask.rateLimitRpm, ask.now);
    if (!rate.allowed) return Promise.resolve({ kind: 'rate', resetMs: rate.resetMs });
    const { remaining, resetMs } = rate;
    const held = this.holds.of(ask.keyId, ask.now);
    if (ask.creditLimitMicro !== null && ask.spentMicro + held >= ask.creditLimitMicro) {
      return Promise.resolve({ kind: 'credit', remaining, resetMs });
    }
    this.holds.hold(ask.reqId, ask.keyId, ask.heldMicro, ask.lapsesAt);
    return Promise.resolve({ kind: 'held', remaining, resetMs });
  }

  settle(reqId: string, micro: number): void {
    this.holds.settle(reqId, micro);
  }

  release(reqId: string): void {
    this.holds.release(reqId);
  }

  purge(now: number): Promise<number> {
    // Holds forget a key with its last hold already; a key's rate window is kept until this.
    return Promise.resolve(this.rate.forgetIdle(now));
  }

  /** An answered request's hold never lapses here: it goes with the process. */
  keep(): void {}

  /** Nothing is written after the fact. */
  reportFailures(): void {}
}
