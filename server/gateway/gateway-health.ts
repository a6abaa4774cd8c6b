import type { BreakerView } from './breakers.js';

/**
 * The gateways' breakers as the control plane knows them, for the Routes screen: those of the
 * gateways in this process, read live, and those other processes report with their rows over the
 * internal API, each the latest a gateway sent, forgotten once older than REMOTE_TTL_MS.
 * Nothing here is a second bookkeeping: every view is a gateway's own.
 */

/** A remote gateway's view older than this is ignored (the gateway stopped, or its rows did). */
export const REMOTE_TTL_MS = 120_000;
/** Gateways in other processes remembered at most; beyond it the oldest report goes. */
const MAX_REMOTE = 256;

/** What a gateway in this process shows: its breakers' view, read when asked. */
export interface LocalBreakers {
  view(): BreakerView[];
}

export class GatewayHealth {
  private readonly local = new Map<string, LocalBreakers>();
  private readonly remote = new Map<string, { at: number; views: BreakerView[] }>();

  constructor(private readonly now: () => number = Date.now) {}

  /** A gateway of this process; the function returned forgets it (the gateway closed). */
  attach(id: string, breakers: LocalBreakers): () => void {
    this.local.set(id, breakers);
    return () => {
      if (this.local.get(id) === breakers) this.local.delete(id);
    };
  }

  /** What a gateway elsewhere reported, now. */
  report(id: string, views: readonly BreakerView[]): void {
    const now = this.now();
    this.remote.delete(id);
    this.remote.set(id, { at: now, views: [...views] });
    for (const [other, entry] of this.remote) {
      if (this.remote.size <= MAX_REMOTE && now - entry.at <= REMOTE_TTL_MS) break;
      if (other !== id) this.remote.delete(other);
    }
  }

  /** Every gateway's view of its breakers not closed (remote ones if recent), in no order. */
  views(): BreakerView[] {
    const now = this.now();
    const views: BreakerView[] = [];
    for (const breakers of this.local.values()) views.push(...breakers.view());
    for (const [id, entry] of this.remote) {
      if (now - entry.at > REMOTE_TTL_MS) this.remote.delete(id);
      else views.push(...entry.views);
    }
    return views;
  }
}
