/**
 * Answers of a pure function by their argument, for the request path: what every call with the
 * same key would otherwise compute again (its secret's HMAC; its organisation's provider key,
 * opened from the sealed bytes the store holds). A pure function's answer is never stale, so
 * nothing here needs forgetting when a key is revoked or a provider key rotated: a revocation
 * is read from the store on each call, and a rotation changes the sealed bytes, hence the argument.
 *
 * Held in memory, never logged or sent. This process already holds the key-hash secret and the
 * vault's master key, from which each of these answers follows, so a reader of its memory gains
 * nothing it had not already.
 */
export class Memo<V> {
  private readonly answers = new Map<string, V>();

  constructor(
    private readonly compute: (argument: string) => V,
    /** Answers kept at most; past it the memo starts over (a flood of unknown secrets costs only the computing). */
    private readonly limit = 10_000,
  ) {}

  get(argument: string): V {
    let answer = this.answers.get(argument);
    if (answer === undefined) {
      answer = this.compute(argument);
      if (this.answers.size >= this.limit) this.answers.clear();
      this.answers.set(argument, answer);
    }
    return answer;
  }
}
