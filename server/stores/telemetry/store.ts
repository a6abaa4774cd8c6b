import type { Database, Statement } from 'better-sqlite3';
import type { FastifyBaseLogger } from 'fastify';
import { ReadCache } from '../read-cache.js';
import { openSqlite } from '../sqlite.js';
import { registerSearchFunctions, signEpochs } from './search-terms.js';

export const TELEMETRY_MIGRATIONS = new URL('./migrations/', import.meta.url);

/** Opens the request-log store for writing, bringing its schema and search signatures up to date. */
export function openTelemetry(path: string, upgrading?: (file: string) => void): Database {
  const db = openSqlite(path, TELEMETRY_MIGRATIONS, { functions: registerSearchFunctions, upgrading });
  try {
    signEpochs(db);
    return db;
  } catch (error) {
    db.close();
    throw error;
  }
}

interface Queries {
  lastUsed: Statement<[string], { key_id: string; last_used: number }>;
  /** Last use by key list: imports commit on other connections, which empties it. */
  lastUsedCache: ReadCache<Map<string, number>>;
}

/**
 * The request-log store. It may be missing or broken while the control plane is fine,
 * so it is opened lazily, every read is guarded, and after a failure the next read
 * tries to open it again: the server recovers without a restart.
 */
export class TelemetryStore {
  private db: Database | null = null;
  private queries: Queries | null = null;
  private reportedDown = false;

  constructor(
    readonly path: string,
    private readonly log: FastifyBaseLogger,
  ) {}

  /** Runs `query` against the store; null when the store cannot be opened or read. */
  read<T>(query: (db: Database, queries: Queries) => T): T | null {
    const db = this.connect();
    if (!db || !this.queries) return null;
    try {
      return query(db, this.queries);
    } catch (error) {
      this.markDown(error);
      return null;
    }
  }

  /** Whether the store can be opened now (creating and migrating it if new). */
  reachable(): boolean {
    return this.connect() !== null;
  }

  /** Newest request time per key, for keys with at least one request. */
  lastUsedByKey(keyIds: string[]): Map<string, number> | null {
    if (keyIds.length === 0) return new Map();
    const ids = JSON.stringify(keyIds);
    return this.read((_db, q) =>
      q.lastUsedCache.get(ids, () => new Map(q.lastUsed.all(ids).map((r) => [r.key_id, r.last_used]))),
    );
  }

  close(): void {
    this.db?.close();
    this.db = null;
    this.queries = null;
  }

  private connect(): Database | null {
    if (this.db) return this.db;
    try {
      // A migration backfills from every row: minutes on a store of millions, during which
      // the API waits. Said before it starts, so that the wait has a reason in the log.
      const db = openTelemetry(this.path, (migration) =>
        this.log.info({ path: this.path, migration }, 'upgrading the telemetry store (a large store takes minutes)'),
      );
      this.queries = {
        lastUsed: db.prepare(`SELECT k.value AS key_id,
            (SELECT MAX(ts) FROM requests WHERE key_id = k.value) AS last_used
          FROM json_each(?) k WHERE last_used IS NOT NULL`),
        lastUsedCache: new ReadCache(db, 1_000),
      };
      this.db = db;
      if (this.reportedDown) this.log.info('telemetry store reachable again');
      this.reportedDown = false;
      return db;
    } catch (error) {
      this.markDown(error);
      return null;
    }
  }

  private markDown(error: unknown): void {
    this.close();
    if (!this.reportedDown) this.log.warn({ err: error, path: this.path }, 'telemetry store unavailable');
    this.reportedDown = true;
  }
}
