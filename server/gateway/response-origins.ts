/**
 * Which target produced each response this gateway served through the Responses API, by the
 * response's id: a request that continues one (`previous_response_id`) must go where its state
 * is. Bounded: the oldest are forgotten first, and a forgotten one is refused clearly, never
 * sent to a target that would not know it.
 */
export class ResponseOrigins {
  private readonly byId = new Map<string, string>();

  constructor(private readonly most = 100_000) {}

  set(responseId: string, target: string): void {
    if (responseId === '' || responseId.length > 256) return;
    this.byId.delete(responseId);
    this.byId.set(responseId, target);
    if (this.byId.size > this.most) this.byId.delete(this.byId.keys().next().value!);
  }

  /** The `provider/model` that produced it, or null when this gateway does not know it. */
  get(responseId: string): string | null {
    return this.byId.get(responseId) ?? null;
  }
}
