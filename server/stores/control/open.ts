import { PgControlStore } from './postgres/store.js';
import type { SessionLifetimes } from './sessions.js';
import { SqliteControlStore, type ControlLocation, type ControlStore } from './store.js';

/** The control store at `location`, brought up to date: a SQLite file, or a PostgreSQL database. */
export async function openControlStore(location: ControlLocation, lifetimes: SessionLifetimes): Promise<ControlStore> {
  return 'url' in location
    ? await PgControlStore.open(location.url, lifetimes)
    : SqliteControlStore.open(location.path, lifetimes);
}
