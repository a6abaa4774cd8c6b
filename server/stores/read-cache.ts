import type { Database, Statement } from 'better-sqlite3';

/**
 * Answers of a connection's hot reads (the caller's session, the key list, each key's last
 * use), kept until the database changes: a change by this connection moves
 * `total_changes()`, a commit by any other connection or process (the admin command, an
 * import) moves `data_version`. Checking both is one tiny statement, far cheaper than the
 * reads it saves; any change at all empties the cache, so an answer is never stale.
 */
export class ReadCache<V> {
  private readonly stampOf: Statement<[], { local: number; other: number }>;
  private stamp = '';
  private readonly entries = new Map<string, V>();

  constructor(
    db: Database,
    /** Entries kept at most; past it the cache starts over (sessions are many, keys few). */
    private readonly limit = 10_000,
  ) {
    this.stampOf = db.prepare('SELECT total_changes() AS local, data_version AS other FROM pragma_data_version');
  }

  get(key: string, read: () => V): V {
    const { local, other } = this.stampOf.get()!;
    const stamp = `${local}:${other}`;
    if (stamp !== this.stamp) {
      this.entries.clear();
      this.stamp = stamp;
    }
    if (this.entries.has(key)) return this.entries.get(key)!;
    const value = read();
    if (this.entries.size >= this.limit) this.entries.clear();
    this.entries.set(key, value);
    return value;
  }
}
