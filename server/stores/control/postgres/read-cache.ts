import type pg from 'pg';

/**
 * The control store's change count (migration 002), read once per turn of the event loop and
 * shared by every cache of the pool: requests that arrive together pay one round trip between
 * them. As on SQLite (../../read-cache.ts), the answers of a turn are those of its first read: a
 * commit anywhere, on any replica, is seen from the next turn on. A request that follows an
 * acknowledged change (a revocation on another replica) is read in a turn that began after it.
 * That holds for reads started by network events (requests, the gateway's calls): a read started
 * from a timer or setImmediate may share a count asked before the change, as on SQLite.
 */
export class ChangeCount {
  private current: Promise<number> | null = null;
  /** Read again at the next `get`: for a commit known to have happened (a write of this process, the telemetry thread's). */
  readonly forget = () => {
    this.current = null;
  };

  constructor(private readonly pool: pg.Pool) {}

  get(): Promise<number> {
    if (this.current === null) {
      this.current = this.pool
        // Prepared once a connection: it runs every turn the server is busy.
        .query<{ count: number }>({ name: 'control_changes', text: 'SELECT count FROM control_changes' })
        .then((result) => result.rows[0]!.count);
      // A failed read is not kept: the next caller asks again.
      this.current.catch(this.forget);
      setImmediate(this.forget);
    }
    return this.current;
  }
}

/** Answers of the hot reads (a caller's session, the key list, a key by its secret), kept until the count moves. */
export class PgReadCache<V> {
  private count = -1;
  private readonly entries = new Map<string, V>();

  constructor(
    private readonly changes: ChangeCount,
    /** Entries kept at most; past it the cache starts over. */
    private readonly limit = 10_000,
  ) {}

  async get(key: string, read: () => Promise<V>): Promise<V> {
    const count = await this.changes.get();
    // A caller whose count is older than one already seen reads through: what it would keep may be stale.
    if (count < this.count) return read();
    if (count !== this.count) {
      this.entries.clear();
      this.count = count;
    }
    if (this.entries.has(key)) return this.entries.get(key)!;
    const value = await read();
    // Kept only while the count it was read under is still the newest seen.
    if (this.count === count) {
      if (this.entries.size >= this.limit) this.entries.clear();
      this.entries.set(key, value);
    }
    return value;
  }
}
