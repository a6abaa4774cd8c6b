/**
 * Micro-PKR held against keys' credit limits for requests not yet settled into `spent_micro`:
 * an estimate while a request runs, its actual cost once answered until its row is written.
 * A request is admitted while the settled spend plus what is held stays below the limit, so
 * concurrent requests overshoot the limit by one request's cost at most.
 */
export class CreditHolds {
  private readonly held = new Map<string, number>();

  of(keyId: string): number {
    return this.held.get(keyId) ?? 0;
  }

  hold(keyId: string, micro: number): void {
    this.held.set(keyId, this.of(keyId) + micro);
  }

  release(keyId: string, micro: number): void {
    const left = this.of(keyId) - micro;
    if (left > 0) this.held.set(keyId, left);
    else this.held.delete(keyId);
  }
}
