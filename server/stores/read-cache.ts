import type { Database, Statement } from 'better-sqlite3';

/**
 * Commits by other connections to one database, as `PRAGMA data_version` counts them. The
 * pragma opens a read transaction, which takes file locks (two fcntl calls and an fstat,
 * ~3 µs bare, ~5 under load): it is read once per turn of the event loop and shared by
 * every cache of the connection. Requests that arrive together (a busy server reads
 * several sockets per turn) pay it once between them: measured on GET /keys under load,
 * ~10 µs a request less than reading it once per synchronous run. Within a turn the
 * answers are those of its first read, as if every request of the turn ran at that
 * instant; a commit elsewhere is seen from the next turn on.
 */
class OtherCommits {
  private readonly version: Statement<[], number>;
  private current: number | null = null;
  /** Read again at the next `get`: for a commit known to have happened (see `otherConnectionCommitted`). */
  readonly forget = () => {
    this.current = null;
  };

  constructor(db: Database) {
    this.version = db.prepare<[], number>('PRAGMA data_version').pluck();
  }

  get(): number {
    if (this.current === null) {
      this.current = this.version.get()!;
      setImmediate(this.forget);
    }
    return this.current;
  }
}

const otherCommitsOf = new WeakMap<Database, OtherCommits>();

/**
 * Tells `db`'s caches that another connection has committed, for a caller that learns it before
 * the next turn of the event loop would (a writing thread's message): they read `data_version`
 * again at their next read instead of keeping this turn's answer.
 */
export function otherConnectionCommitted(db: Database): void {
  otherCommitsOf.get(db)?.forget();
}

/**
 * Answers of a connection's hot reads (the caller's session, the key list, each key's last
 * use), kept until the database changes: a change by this connection moves
 * `total_changes()` (checked on every read, it costs no lock), a commit by any other
 * connection or process (the admin command, an import) moves `data_version` (see
 * OtherCommits). Any change at all empties the cache, so no answer is older than the
 * turn of the event loop that gives it.
 */
export class ReadCache<V> {
  private readonly db: Database;
  private readonly localChanges: Statement<[], number>;
  private readonly otherCommits: OtherCommits;
  private changes = -1;
  private commits = -1;
  private readonly entries = new Map<string, V>();

  constructor(
    db: Database,
    /** Entries kept at most; past it the cache starts over (sessions are many, keys few). */
    private readonly limit = 10_000,
  ) {
    this.db = db;
    this.localChanges = db.prepare<[], number>('SELECT total_changes()').pluck();
    let commits = otherCommitsOf.get(db);
    if (!commits) otherCommitsOf.set(db, (commits = new OtherCommits(db)));
    this.otherCommits = commits;
  }

  get(key: string, read: () => V): V {
    // Inside a transaction the answer may be rolled back (a dry run), and total_changes()
    // never goes back down: kept, it would outlive the rollback. Read through, keep nothing.
    if (this.db.inTransaction) return read();
    const changes = this.localChanges.get()!;
    const commits = this.otherCommits.get();
    if (changes !== this.changes || commits !== this.commits) {
      this.entries.clear();
      this.changes = changes;
      this.commits = commits;
    }
    if (this.entries.has(key)) return this.entries.get(key)!;
    const value = read();
    if (this.entries.size >= this.limit) this.entries.clear();
    this.entries.set(key, value);
    return value;
  }
}
