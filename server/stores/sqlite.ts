import BetterSqlite3, { type Database } from 'better-sqlite3';
import { privateStoreFiles } from '../security/private-files.js';
import { migrate, type SqliteMigrationSteps } from './migrate.js';

/** How long a connection waits for another's lock by default. */
export const BUSY_TIMEOUT_MS = 5_000;

/** Opens a store file with the settings every store shares, then brings its schema up to date. */
export function openSqlite(
  path: string,
  migrations: URL,
  options: {
    fileMustExist?: boolean;
    functions?: (db: Database) => void;
    /** What migrations do beyond their SQL, by version (see migrate). */
    steps?: SqliteMigrationSteps;
    /** Told of each migration about to run on an existing store (see migrate). */
    upgrading?: (file: string) => void;
    /** How long to wait for another connection's write lock; 5 s by default. */
    busyTimeoutMs?: number;
    /** Bytes per page of a new file; an existing file keeps the size it was made with. */
    pageSize?: number;
  } = {},
): Database {
  const db = new BetterSqlite3(path, { fileMustExist: options.fileMustExist ?? false });
  try {
    // Before WAL mode creates its files, which take the database's mode.
    privateStoreFiles(path);
    // Before migrating: a migration's SQL may call them.
    options.functions?.(db);
    // Before the first write: a page size is fixed once the file has a header.
    if (options.pageSize !== undefined) db.pragma(`page_size = ${options.pageSize}`);
    // Before the switch to WAL mode, which waits for the lock of a store in rollback mode.
    db.pragma(`busy_timeout = ${options.busyTimeoutMs ?? BUSY_TIMEOUT_MS}`);
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = FULL');
    db.pragma('foreign_keys = ON');
    migrate(db, migrations, options.upgrading, options.steps);
    return db;
  } catch (error) {
    db.close();
    throw error;
  }
}
