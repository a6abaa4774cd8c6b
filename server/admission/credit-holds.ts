interface Hold {
  keyId: string;
  micro: number;
  /** When the hold lapses if nothing settles it (a gateway that died mid-request). */
  until: number;
}

interface KeyHolds {
  /** The sum of `holds`' amounts, kept as they change: read on every request. */
  micro: number;
  holds: Map<string, Hold>;
  /** The earliest `until` among `holds` (or later): no hold lapses before it. */
  nextLapse: number;
}

/**
 * Micro-PKR held against keys' credit limits for requests not yet settled into `spent_micro`,
 * by request id: the request's largest possible cost while it runs, its actual cost once
 * answered until its row is written. A request is admitted while the settled spend plus what
 * is held stays below the limit, so concurrent requests, on any number of gateways, overshoot
 * the limit by one request's cost at most.
 */
export class CreditHolds {
  private readonly byKey = new Map<string, KeyHolds>();
  private readonly byRequest = new Map<string, Hold>();
  /**
   * Holds released so far, and the count at each key's latest release. A release after a row is
   * written moves its cost into the key's settled spend: a key read before it lacks that spend, so
   * an admission that awaited its reads asks whether its key had a release since, to read it again.
   */
  releases = 0;
  private readonly lastReleaseOf = new Map<string, number>();

  /** Whether `keyId` had a hold released after the count stood at `since`. */
  releasedSince(keyId: string, since: number): boolean {
    return (this.lastReleaseOf.get(keyId) ?? 0) > since;
  }

  /** What is held against `keyId` at `now`; lapsed holds are dropped on the way. */
  of(keyId: string, now: number): number {
    const key = this.byKey.get(keyId);
    if (!key) return 0;
    if (now >= key.nextLapse) {
      key.nextLapse = Infinity;
      for (const [reqId, hold] of key.holds) {
        if (hold.until <= now) this.release(reqId);
        else key.nextLapse = Math.min(key.nextLapse, hold.until);
      }
    }
    return this.byKey.get(keyId)?.micro ?? 0;
  }

  hold(reqId: string, keyId: string, micro: number, until: number): void {
    this.release(reqId);
    const hold = { keyId, micro, until };
    this.byRequest.set(reqId, hold);
    let key = this.byKey.get(keyId);
    if (!key) this.byKey.set(keyId, (key = { micro: 0, holds: new Map(), nextLapse: Infinity }));
    key.holds.set(reqId, hold);
    key.micro += micro;
    key.nextLapse = Math.min(key.nextLapse, until);
  }

  /** The request was answered and cost `micro`: held, without lapsing, until its row is written. */
  settle(reqId: string, micro: number): void {
    const hold = this.byRequest.get(reqId);
    if (!hold) return;
    this.byKey.get(hold.keyId)!.micro += micro - hold.micro;
    hold.micro = micro;
    hold.until = Infinity;
  }

  release(reqId: string): void {
    const hold = this.byRequest.get(reqId);
    if (!hold) return;
    this.byRequest.delete(reqId);
    this.releases += 1;
    const key = this.byKey.get(hold.keyId)!;
    key.holds.delete(reqId);
    key.micro -= hold.micro;
    // Kept after the key's last hold goes, which is the release that matters most: one entry a key.
    this.lastReleaseOf.set(hold.keyId, this.releases);
    if (key.holds.size === 0) this.byKey.delete(hold.keyId);
  }
}
