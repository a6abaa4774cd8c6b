import { readdirSync, readFileSync } from 'node:fs';
import type { Database } from 'better-sqlite3';

/** The folder's numbered `NNN_name.sql` files, in order, with their version. */
export function migrationFiles(folder: URL): { name: string; version: number }[] {
  return readdirSync(folder)
    .filter((name) => /^\d{3}_[\w-]+\.sql$/.test(name))
    .sort()
    .map((name) => ({ name, version: Number(name.slice(0, 3)) }));
}

const versionOf = (db: Database) => db.pragma('user_version', { simple: true }) as number;

/**
 * Work of a migration that its SQL cannot do (data built by the code: version 1 of the routes
 * document), run after the file's SQL in the same transaction, by the file's version.
 * `upgrading`: the store had a schema before this run (false for a new store).
 */
export type SqliteMigrationSteps = Readonly<Record<number, (db: Database, upgrading: boolean) => void>>;

/**
 * Applies the numbered `NNN_name.sql` files of a folder that are newer than the
 * database's `user_version`, each in its own transaction (with its step, if it has one), so a
 * failed migration leaves the store at the last version that fully applied. `upgrading` hears
 * of each file before it runs on a store that already had a schema (a new store's are instant).
 */
export function migrate(
  db: Database,
  folder: URL,
  upgrading?: (file: string) => void,
  steps: SqliteMigrationSteps = {},
): void {
  const current = versionOf(db);
  for (const { name, version } of migrationFiles(folder)) {
    if (version <= current) continue;
    const sql = readFileSync(new URL(name, folder), 'utf8');
    if (current > 0) upgrading?.(name);
    db.transaction(() => {
      // Another connection may have applied it since `current` was read: the server and
      // the admin command opening an old store at once, each finding it behind.
      if (versionOf(db) >= version) return;
      db.exec(sql);
      steps[version]?.(db, current > 0);
      db.pragma(`user_version = ${version}`);
    }).immediate();
  }
}

const newest = new Map<string, number>();

/** The version of the folder's newest migration; the folder is read once (a server asks at each read during an upgrade). */
export function newestVersion(folder: URL): number {
  let version = newest.get(folder.href);
  if (version === undefined) {
    version = Math.max(0, ...migrationFiles(folder).map((file) => file.version));
    newest.set(folder.href, version);
  }
  return version;
}

/** Whether a store that already has a schema is older than the folder's migrations (a new one is not). */
export function isBehind(db: Database, folder: URL): boolean {
  const current = versionOf(db);
  return current > 0 && current < newestVersion(folder);
}
