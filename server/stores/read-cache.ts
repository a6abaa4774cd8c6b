import type { Database, Statement } from 'better-sqlite3';

/**
 * Answers of a connection's hot reads (the caller's session, the key list, each key's last
 * use), kept until the database changes: a change by this connection moves
 * `total_changes()`, a commit by any other connection or process (the admin command, an
 * import) moves `data_version`. Checking both is one tiny statement, far cheaper than the
 * reads it saves; any change at all empties the cache, so an answer is never stale.
 */
export class ReadCache<V> {
  private readonly localChanges: Statement<[], number>;
  private readonly otherCommits: Statement<[], number>;
  private stamp = '';
  private readonly entries = new Map<string, V>();

  constructor(
    db: Database,
    /** Entries kept at most; past it the cache starts over (sessions are many, keys few). */
    private readonly limit = 10_000,
  ) {
    // Two plain statements read as single values: a third of the cost of one joined query.
    this.localChanges = db.prepare<[], number>('SELECT total_changes()').pluck();
    this.otherCommits = db.prepare<[], number>('PRAGMA data_version').pluck();
  }

  get(key: string, read: () => V): V {
    const stamp = `${this.localChanges.get()!}:${this.otherCommits.get()!}`;
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
