import type { SessionLifetimes } from './sessions.js';
import { SqliteControlStore, type ControlLocation, type ControlStore } from './store.js';

/** The control store at `location`, brought up to date: a SQLite file, or a PostgreSQL database. */
export async function openControlStore(location: ControlLocation, lifetimes: SessionLifetimes): Promise<ControlStore> {
  // PostgreSQL's driver and queries are loaded only for a store that is there.
  if ('url' in location) return (await import('./postgres/store.js')).PgControlStore.open(location.url, lifetimes);
  return SqliteControlStore.open(location.path, lifetimes);
}
