interface Hold {
  keyId: string;
  micro: number;
  /** When the hold lapses if nothing settles it (a gateway that died mid-request). */
  until: number;
}

/**
 * Micro-PKR held against keys' credit limits for requests not yet settled into `spent_micro`,
 * by request id: the request's largest possible cost while it runs, its actual cost once
 * answered until its row is written. A request is admitted while the settled spend plus what
 * is held stays below the limit, so concurrent requests, on any number of gateways, overshoot
 * the limit by one request's cost at most.
 */
export class CreditHolds {
  private readonly byKey = new Map<string, Map<string, Hold>>();
  private readonly byRequest = new Map<string, Hold>();

  /** What is held against `keyId` at `now`; lapsed holds are dropped on the way. */
  of(keyId: string, now: number): number {
    const holds = this.byKey.get(keyId);
    if (!holds) return 0;
    let micro = 0;
    for (const [reqId, hold] of holds) {
      if (hold.until > now) micro += hold.micro;
      else this.release(reqId);
    }
    return micro;
  }

  hold(reqId: string, keyId: string, micro: number, until: number): void {
    this.release(reqId);
    const hold = { keyId, micro, until };
    this.byRequest.set(reqId, hold);
    let holds = this.byKey.get(keyId);
    if (!holds) this.byKey.set(keyId, (holds = new Map()));
    holds.set(reqId, hold);
  }

  /** The request was answered and cost `micro`: held, without lapsing, until its row is written. */
  settle(reqId: string, micro: number): void {
    const hold = this.byRequest.get(reqId);
    if (!hold) return;
    hold.micro = micro;
    hold.until = Infinity;
  }

  release(reqId: string): void {
    const hold = this.byRequest.get(reqId);
    if (!hold) return;
    this.byRequest.delete(reqId);
    const holds = this.byKey.get(hold.keyId)!;
    holds.delete(reqId);
    if (holds.size === 0) this.byKey.delete(hold.keyId);
  }
}
