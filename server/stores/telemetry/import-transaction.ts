import type { Database } from 'better-sqlite3';
import { fewSharedTerms, storedLookups, type StoredLookups } from './search-planner.js';

/** How an import's write transaction holds the store (see `beginImport`). */
export interface ImportTransaction {
  /** The store had no rows when the write lock was taken: nothing to look up in it. */
  readonly empty: boolean;
  /** The store is written in rollback-journal mode, its exclusive lock held: other connections are shut out until the commit. */
  readonly alone: boolean;
  /**
   * Taken alone with rows: its search lookups, read whole under the lock, for the import's
   * reading thread, which must not open the store. Else null.
   */
  readonly lookups: StoredLookups | null;
  /** The indexes dropped at its start, built again by `commitImport` (`DEFERRED_INDEXES`). */
  readonly deferred: readonly string[];
}

/**
 * The indexes an import into an empty store taken alone builds after its rows, not with each.
 * The index by cost takes a day's rows in cost order: each row written lands on a page of its
 * own among the day's, where the others take rows in time order, at their end. Measured, 10M
 * NDJSON rows into an empty store, alternating runs: rows written ~73k -> ~89k a second, the index
 * then built in ~13 s, the import 146 -> 134 s and 161 -> 145 s. Dropping the indexes by key and
 * by organisation as well changed nothing, nor did the request id's (kept: it finds a repeated id).
 */
const DEFERRED_INDEXES = ['requests_by_cost'];

/**
 * Takes the write lock for an import. A store in WAL mode has every page written twice,
 * to the log and then into the file at the checkpoint: at ten million rows an 8 GB log,
 * whose commit and checkpoint took ~40 s of a ~250 s import. A store that no other
 * connection has open is written in rollback-journal mode instead: its new pages go straight
 * into the file, and the journal holds the pages that existed before the import changed them.
 * A crash leaves a hot journal, which the next connection that opens the store for writing
 * (every server and import does) rolls back: the store is as it was (a read-only connection
 * cannot open it until then). Until the commit, every other connection finds the store
 * locked: a server started meanwhile answers its analytics with 503 until the commit (a
 * server already running has the store open, keeps it in WAL mode and reads on).
 *
 * Only an empty store is taken alone unless `withRows` (an import from a source): live
 * telemetry writes a few rows at a time beside a server, where every attempt to leave WAL
 * mode would fail. With rows, the store is taken alone only when its search lookups can be
 * read whole (`fewSharedTerms`), so that the import's reading thread is handed them and never
 * opens the store, whose lock it could not get once pages spill. Measured, 500k NDJSON rows
 * into stores of 500k and 5.5M rows, alternating runs: ~15 % faster than in WAL mode.
 */
export function beginImport(db: Database, { withRows = false } = {}): ImportTransaction {
  const mayTakeAlone = () => isEmpty(db) || (withRows && fewSharedTerms(db));
  const shared = (): ImportTransaction => {
    db.exec('BEGIN IMMEDIATE');
    return { empty: isEmpty(db), alone: false, lookups: null, deferred: [] };
  };
  if (!mayTakeAlone() || !leaveWal(db)) return shared();
  try {
    // EXCLUSIVE, not IMMEDIATE: a reader let in now could hold its lock when the commit
    // needs it, and the commit would fail after the busy timeout, losing the whole import.
    db.exec('BEGIN EXCLUSIVE');
    // Between the switch and the lock, another connection may have opened the store (which
    // puts it back in WAL mode) or written rows: then the import shares it after all.
    if (journalMode(db) === 'delete' && mayTakeAlone()) {
      const empty = isEmpty(db);
      // In the transaction: a failed or killed import leaves the indexes as they were.
      const deferred = empty ? dropIndexes(db, DEFERRED_INDEXES) : [];
      return { empty, alone: true, lookups: empty ? null : storedLookups(db), deferred };
    }
    db.exec('ROLLBACK');
    db.pragma('journal_mode = WAL');
  } catch (error) {
    if (db.inTransaction) db.exec('ROLLBACK');
    backToWal(db);
    throw error;
  }
  return shared();
}

/**
 * The page cache an index is built in after the rows, and SQLite's helper threads for its sort.
 * SQLite sorts an index's entries in runs as large as the page cache (up to 512 MiB) before it
 * merges them: in the import's cache of gigabytes, one run of every entry, sorted in memory that
 * no processor cache holds. In runs of 16 MiB, sorted by a helper thread while the next is read
 * (the reading thread's core is free by then), the index by cost of 10M rows took ~6 s instead of
 * ~13-17 s, measured alone and in imports (which took ~4-9 s less for it).
 */
const BUILD_CACHE_KIB = 16 * 1024;
const BUILD_THREADS = 2;

/** Builds the indexes the import dropped (in a cache of their own: `BUILD_CACHE_KIB`), then commits it. */
export function commitImport(db: Database, transaction: ImportTransaction): void {
  if (transaction.deferred.length > 0) {
    const cache = db.pragma('cache_size', { simple: true }) as number;
    const threads = db.pragma('threads', { simple: true }) as number;
    db.pragma(`cache_size = -${BUILD_CACHE_KIB}`);
    db.pragma(`threads = ${BUILD_THREADS}`);
    try {
      for (const sql of transaction.deferred) db.exec(sql);
    } finally {
      db.pragma(`cache_size = ${cache}`);
      db.pragma(`threads = ${threads}`);
    }
  }
  db.exec('COMMIT');
}

/** Drops those of `names` the store has; returns the SQL that makes each again, as the store defined it. */
function dropIndexes(db: Database, names: readonly string[]): string[] {
  const indexes = db
    .prepare<[string], { name: string; sql: string }>(
      `SELECT name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL AND name IN (SELECT value FROM json_each(?))`,
    )
    .all(JSON.stringify(names));
  for (const { name } of indexes) db.exec(`DROP INDEX "${name}"`);
  return indexes.map(({ sql }) => sql);
}

/** Rolls back what is not committed and puts a store taken alone back in WAL mode. */
export function endImport(db: Database, transaction: ImportTransaction): void {
  if (db.inTransaction) db.exec('ROLLBACK');
  if (transaction.alone) backToWal(db);
}

/**
 * Should another connection hold a lock past the busy timeout, the store stays in rollback
 * mode until a connection opens it for writing: each puts it in WAL mode first (sqlite.ts).
 */
function backToWal(db: Database): void {
  try {
    db.pragma('journal_mode = WAL');
  } catch (error) {
    if (!isBusy(error)) throw error;
  }
}

/** No request rows and no search terms: nothing the reading thread would look up (`NO_ROWS`). */
function isEmpty(db: Database): boolean {
  const sql = 'SELECT (SELECT MAX(id) FROM request_rows) IS NULL AND (SELECT MAX(id) FROM search_terms) IS NULL';
  return db.prepare(sql).pluck().get() === 1;
}

function journalMode(db: Database): string {
  return db.pragma('journal_mode', { simple: true }) as string;
}

/** Leaving WAL mode needs the store to itself: false at once, without waiting, when another connection has it open. */
function leaveWal(db: Database): boolean {
  const timeout = db.pragma('busy_timeout', { simple: true }) as number;
  db.pragma('busy_timeout = 0');
  try {
    return db.pragma('journal_mode = DELETE', { simple: true }) === 'delete';
  } catch (error) {
    if (isBusy(error)) return false;
    throw error;
  } finally {
    db.pragma(`busy_timeout = ${timeout}`);
  }
}

function isBusy(error: unknown): boolean {
  return (error as { code?: unknown }).code === 'SQLITE_BUSY';
}
