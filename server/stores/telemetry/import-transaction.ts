import type { Database } from 'better-sqlite3';

/** How an import's write transaction holds the store (see `beginImport`). */
export interface ImportTransaction {
  /** The store had no rows when the write lock was taken: nothing to look up in it. */
  readonly empty: boolean;
  /** The store is written in rollback-journal mode, which shuts other connections out until the commit. */
  readonly alone: boolean;
}

/**
 * Takes the write lock for an import. A store in WAL mode has every page written twice,
 * to the log and then into the file at the checkpoint: at ten million rows an 8 GB log,
 * whose commit and checkpoint took ~40 s of a ~250 s import. An empty store that no other
 * connection has open is written in rollback-journal mode instead: its new pages go straight
 * into the file, and the journal holds the few pages that existed before. A crash leaves a
 * hot journal, which the next connection that opens the store for writing (every server and
 * import does) rolls back: the store is empty again. Until the commit, a connection that
 * opens the store for writing finds it locked, and so does a reader once the import has
 * spilled pages into the file. A store with rows keeps WAL mode, so that a server on it
 * reads on meanwhile.
 */
export function beginImport(db: Database): ImportTransaction {
  if (!isEmpty(db) || !leaveWal(db)) {
    db.exec('BEGIN IMMEDIATE');
    return { empty: isEmpty(db), alone: false };
  }
  try {
    db.exec('BEGIN IMMEDIATE');
  } catch (error) {
    backToWal(db);
    throw error;
  }
  // Between the switch and the lock, another connection may have opened the store (which
  // puts it back in WAL mode) or written rows: then the import shares it after all.
  if (journalMode(db) === 'delete' && isEmpty(db)) return { empty: true, alone: true };
  db.exec('ROLLBACK');
  db.pragma('journal_mode = WAL');
  db.exec('BEGIN IMMEDIATE');
  return { empty: isEmpty(db), alone: false };
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
  const sql = 'SELECT (SELECT MAX(rowid) FROM requests) IS NULL AND (SELECT MAX(id) FROM search_terms) IS NULL';
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
