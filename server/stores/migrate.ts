import { readdirSync, readFileSync } from 'node:fs';
import type { Database } from 'better-sqlite3';

/**
 * Applies the numbered `NNN_name.sql` files of a folder that are newer than the
 * database's `user_version`, each in its own transaction, so a failed migration
 * leaves the store at the last version that fully applied. `upgrading` hears of each
 * file before it runs on a store that already had a schema (a new store's are instant).
 */
export function migrate(db: Database, folder: URL, upgrading?: (file: string) => void): void {
  const current = db.pragma('user_version', { simple: true }) as number;
  const files = readdirSync(folder)
    .filter((name) => /^\d{3}_[\w-]+\.sql$/.test(name))
    .sort();
  for (const name of files) {
    const version = Number(name.slice(0, 3));
    if (version <= current) continue;
    const sql = readFileSync(new URL(name, folder), 'utf8');
    if (current > 0) upgrading?.(name);
    db.transaction(() => {
      db.exec(sql);
      db.pragma(`user_version = ${version}`);
    }).immediate();
  }
}
