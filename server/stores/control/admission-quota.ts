/**
 * What a key's requests take of its `rate_limit_rpm` and hold of its credit, as the admissions of
 * one control plane count them (server/admission/admissions.ts). On SQLite one process serves the
 * store, and keeps the count in its memory; replicas on PostgreSQL keep it in the database
 * (postgres/admission-quota.ts), so that a key's limits hold across all of them.
 */

export interface QuotaAsk {
  keyId: string;
  reqId: string;
  rateLimitRpm: number;
  creditLimitMicro: number | null;
  /** The key's settled spend as the admission read it; a quota in the database reads its own. */
  spentMicro: number;
  /** The request's largest possible cost, held against the credit while it runs. */
  heldMicro: number;
  now: number;
  /** When the hold lapses if nothing settles it (a gateway that died mid-request). */
  lapsesAt: number;
}

export type QuotaVerdict =
  /** The rate's window is full: nothing was counted or held. */
  | { kind: 'rate'; resetMs: number }
  /** Counted against the rate, but the credit is spent: nothing held. */
  | { kind: 'credit'; remaining: number; resetMs: number }
  /** Counted, and `heldMicro` held. */
  | { kind: 'held'; remaining: number; resetMs: number };

export interface AdmissionQuota {
  /**
   * The rate first (a refused request is not counted), then the credit: admitted while the
   * settled spend plus what is held stays below the limit, so that concurrent requests overshoot
   * it by one request's cost at most.
   */
  take(ask: QuotaAsk): Promise<QuotaVerdict>;
  /** The request was answered and cost `micro`: held, no longer lapsing soon, until its row is written. */
  settle(reqId: string, micro: number): void;
  /** The request's row is written and its spend settled into the key: its hold ends. */
  release(reqId: string): void;
  /**
   * Answered requests whose rows are not written yet, or whose spend is still owed: their holds
   * stay. Said again every few minutes while it is so, to a quota whose answered holds lapse
   * (PostgreSQL's: a replica that died would otherwise hold its keys' credit forever).
   */
  keep(reqIds: readonly string[]): void;
  /**
   * Forgets the keys idle at `now` for more than a minute (no request counted, nothing held);
   * returns how many. A quota in the database reads its own clock.
   */
  purge(now: number): Promise<number>;
  /** Where a quota that writes settles and releases after the fact tells of a failed write. */
  reportFailures(report: (error: unknown) => void): void;
  /**
   * Holds released so far. An admission that awaited its reads asks whether its key had a release
   * since (its cost moved into a spend the key read before lacks), and reads the key again.
   */
  readonly releases: number;
  releasedSince(keyId: string, since: number): boolean;
}
