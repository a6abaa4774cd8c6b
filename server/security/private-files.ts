import { chmodSync, existsSync, mkdirSync, statSync, writeFileSync } from 'node:fs';

/**
 * The data folder and every store file in it are the server's user's alone: the stores hold
 * sessions, key hashes and the request log. Creating with a mode is not enough, since a folder or
 * file made earlier (by hand, by an older version, under another umask) keeps its own, so the mode
 * is narrowed on every start too. Permissions are POSIX's; Windows keeps a folder's ACLs.
 */

/** Creates `dir` (and its parents) if missing, and makes it 0700 whatever it was. */
export function privateFolder(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  narrow(dir, 0o700);
}

/**
 * Makes a store file and its WAL and shared-memory files 0600 where they exist. SQLite gives
 * the WAL and shared-memory files it creates the database file's mode, so narrowing the
 * database before the switch to WAL mode covers files still to come.
 */
export function privateStoreFiles(path: string): void {
  for (const file of [path, `${path}-wal`, `${path}-shm`, `${path}-journal`]) if (existsSync(file)) narrow(file, 0o600);
}

function narrow(path: string, mode: number): void {
  if (process.platform === 'win32') return;
  if ((statSync(path).mode & 0o777) !== mode) chmodSync(path, mode);
}

/** Writes a file only the server's user may read (0600 also when it existed before). */
export function writePrivateFile(path: string, text: string): void {
  writeFileSync(path, text, { mode: 0o600 });
  narrow(path, 0o600);
}
