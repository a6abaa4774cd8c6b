/** How long a route stays known to cost more than its requests' bounds after it last did. */
const REMEMBERED_MS = 60 * 60_000;
/** Holds watched at most; past this the oldest go (a gateway that died never sends their rows). */
const MOST_WATCHED = 100_000;

/**
 * Routes whose answers cost more than the request's hold: an upstream that counts more prompt
 * tokens than the body has characters (a system prompt of its own, images it fetched, another
 * tokenizer). A hold is the credit bound's only guarantee, so once a route is seen to pass its
 * holds, its requests of keys with a limit hold all the credit left, one at a time, for an hour.
 */
export class BoundWatch {
  private readonly held = new Map<string, { model: string; micro: number }>();
  private readonly overran = new Map<string, number>();

  /** Whether `model`'s answers were seen, at `now` or in the hour before, to cost more than held. */
  distrusted(model: string, now: number): boolean {
    const until = this.overran.get(model);
    if (until === undefined) return false;
    if (until > now) return true;
    this.overran.delete(model);
    return false;
  }

  /** A request of a limited key admitted on `model`, holding `micro`. */
  watch(reqId: string, model: string, micro: number): void {
    if (this.held.size >= MOST_WATCHED) this.held.delete(this.held.keys().next().value!);
    this.held.set(reqId, { model, micro });
  }

  /** The request's row: what it cost against what it held. */
  settled(reqId: string, costMicro: number, now: number): void {
    const hold = this.held.get(reqId);
    if (!hold) return;
    this.held.delete(reqId);
    if (costMicro > hold.micro) this.overran.set(hold.model, now + REMEMBERED_MS);
  }
}
