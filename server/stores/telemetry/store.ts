import { existsSync } from 'node:fs';
import type { Worker } from 'node:worker_threads';
import BetterSqlite3, { type Database, type Statement } from 'better-sqlite3';
import type { FastifyBaseLogger } from 'fastify';
import { startWorker, workerUrl } from '../../worker-threads.js';
import { isBehind, newestVersion } from '../migrate.js';
import { ReadCache } from '../read-cache.js';
import { BUSY_TIMEOUT_MS, openSqlite } from '../sqlite.js';
import type { TelemetryReads } from './open.js';
import { searchRowsWithoutSizes, signEpochs } from './search-terms.js';
import { codeOf, createRequestViews } from './request-rows.js';
import { registerTelemetryFunctions } from './sql-functions.js';

export const TELEMETRY_MIGRATIONS = new URL('./migrations/', import.meta.url);

/**
 * Pages of a new request-log store. Imports write gigabytes, every page twice in WAL mode
 * (log, then checkpoint), a system call each: 16 KiB pages are a quarter of the calls.
 * Measured: 2M demo rows seeded in 72 s instead of 84, the benchmark's queries unchanged
 * at 1M rows. Stores made with 4 KiB pages keep them: changing needs a VACUUM, a rewrite of
 * the whole file (and, before migration 015, one that could renumber the rowids the search
 * index is keyed by).
 */
const TELEMETRY_PAGE_BYTES = 16_384;

/** Opens the request-log store for writing, bringing its schema and search signatures up to date. */
export function openTelemetry(
  path: string,
  options: { upgrading?: (file: string) => void; busyTimeoutMs?: number } = {},
): Database {
  const db = openSqlite(path, TELEMETRY_MIGRATIONS, {
    functions: registerTelemetryFunctions,
    pageSize: TELEMETRY_PAGE_BYTES,
    // The views and their trigger as the code names them, over the rows as 017 to 020 and 026 left them.
    steps: {
      17: createRequestViews,
      18: compactTimings,
      19: createRequestViews,
      20: createRequestViews,
      26: createRequestViews,
    },
    ...options,
  });
  try {
    signEpochs(db);
    return db;
  } catch (error) {
    db.close();
    throw error;
  }
}

/** 018's step: the views over the timed rows, and a new store's search rows without their sizes. */
function compactTimings(db: Database, upgrading: boolean): void {
  createRequestViews(db);
  if (!upgrading) searchRowsWithoutSizes(db);
}

interface Queries {
  lastUsed: Statement<[string], { key_id: string; last_used: number }>;
  /** Last use by key list: imports commit on other connections, which empties it. */
  lastUsedCache: ReadCache<Map<string, number>>;
}

/**
 * Says in the server's log that `migration` is about to upgrade the store at `path`, whichever of
 * the server's connections runs it: the upgrade's worker, or the gateways' writing thread when
 * its rows or a retention step reach the store first.
 */
export function logUpgrading(log: FastifyBaseLogger, path: string, migration: string): void {
  const key = `${path}\n${migration}`;
  if (named.has(key)) return;
  named.add(key);
  log.info({ path, migration }, 'upgrading the telemetry store (a large store takes minutes)');
}

/**
 * The migrations this process has named, by store: once each. Two of its connections that waited
 * for the same lock each hear of every file (`migrate` names it before its transaction), though
 * only the first runs it.
 */
const named = new Set<string>();

/** After a failed upgrade, the next read tries again no sooner than this: each try is a thread. */
const UPGRADE_RETRY_MS = 30_000;
/** How soon a server opens its telemetry store again after a failure, read or not. */
const RECONNECT_MS = 2_000;

/** Whether the file holds a store older than the migrations (a missing or new one is not). */
function storeIsBehind(path: string): boolean {
  if (!existsSync(path)) return false;
  const db = new BetterSqlite3(path, { fileMustExist: true, timeout: 0 });
  try {
    return isBehind(db, TELEMETRY_MIGRATIONS);
  } finally {
    db.close();
  }
}

/**
 * The request-log store. It may be missing or broken while the control plane is fine,
 * so it is opened lazily, every read is guarded, and after a failure the next read
 * tries to open it again: the server recovers without a restart. An older store is
 * upgraded in a worker thread (minutes at millions of rows), reading as unavailable
 * meanwhile, so the rest of the API goes on answering.
 */
export class TelemetryStore implements TelemetryReads {
  private db: Database | null = null;
  private queries: Queries | null = null;
  private reportedDown = false;
  private upgrade: Worker | null = null;
  /** The store's version, asked on a connection of its own while `upgrade` runs. */
  private probe: Statement<[], number> | null = null;
  private upgradeFailedAt = -Infinity;
  private reconnect: NodeJS.Timeout | null = null;
  private readonly idLists = new WeakMap<readonly { id: string }[], string>();

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

  /** Whether the store can be read now (creating it if new; not while an older one is upgraded). */
  reachable(): boolean {
    return this.connect() !== null;
  }

  /**
   * Newest request time per key, for keys with at least one request. Pass the same list
   * (the key store's cached one) for the same keys: the cache's key, their ids as JSON, is
   * then made once.
   */
  async lastUsedByKey(keys: readonly { id: string }[]): Promise<Map<string, number> | null> {
    if (keys.length === 0) return new Map();
    let ids = this.idLists.get(keys);
    if (ids === undefined) this.idLists.set(keys, (ids = JSON.stringify(keys.map((key) => key.id))));
    return this.read((_db, q) =>
      q.lastUsedCache.get(ids, () => new Map(q.lastUsed.all(ids).map((r) => [r.key_id, r.last_used]))),
    );
  }

  async close(): Promise<void> {
    this.disconnect();
  }

  private disconnect(): void {
    if (this.reconnect) clearTimeout(this.reconnect);
    this.reconnect = null;
    this.stopUpgrade();
    this.db?.close();
    this.db = null;
    this.queries = null;
  }

  private connect(): Database | null {
    if (this.db) return this.db;
    if (this.upgrade) {
      if (!this.upgradedMeanwhile()) return null;
      this.stopUpgrade();
      this.log.info({ path: this.path }, 'telemetry store upgraded');
    } else {
      if (performance.now() - this.upgradeFailedAt < UPGRADE_RETRY_MS) return null;
      try {
        if (storeIsBehind(this.path)) {
          this.startUpgrade();
          return null;
        }
      } catch (error) {
        this.markDown(error);
        return null;
      }
    }
    try {
      // Without waiting: a store an import has to itself (import-transaction.ts) stays locked
      // for minutes, and each read would hold the server up for the busy timeout.
      const db = openTelemetry(this.path, { busyTimeoutMs: 0 });
      db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
      this.queries = {
        lastUsed: db.prepare(`SELECT k.value AS key_id,
            (SELECT MAX(ts) FROM request_rows
              WHERE key_code = ${codeOf('k.value')}) AS last_used
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

  /**
   * Whether the store is up to date while the upgrade's worker runs: by the worker, or by another
   * connection while the worker waited for the lock (an import, the gateways' writing thread
   * making a new store). The store is then read at once, not once the worker is through waiting,
   * which could be the whole of an import. Asked at every read during an upgrade, of a connection
   * kept for it: a header read, microseconds.
   */
  private upgradedMeanwhile(): boolean {
    try {
      if (!this.probe) {
        const db = new BetterSqlite3(this.path, { fileMustExist: true, readonly: true, timeout: 0 });
        try {
          this.probe = db.prepare<[], number>('PRAGMA user_version').pluck();
        } catch (error) {
          db.close();
          throw error;
        }
      }
      return this.probe.get()! >= newestVersion(TELEMETRY_MIGRATIONS);
    } catch {
      // Locked out for now (an import has the store to itself): the worker waits on.
      return false;
    }
  }

  private stopUpgrade(): void {
    // A migration cut short rolls back; the next start upgrades again.
    void this.upgrade?.terminate();
    this.upgrade = null;
    this.probe?.database.close();
    this.probe = null;
  }

  private startUpgrade(): void {
    this.log.info({ path: this.path }, 'telemetry store older than this server: upgrading it in the background');
    const worker = startWorker(workerUrl('upgrade-worker', import.meta.url), { workerData: { path: this.path } });
    this.upgrade = worker;
    // A migration backfills from every row: said before it starts, so that the wait for
    // analytics has a reason in the log.
    worker.on('message', (migration: string) => logUpgrading(this.log, this.path, migration));
    worker.on('error', (error) => {
      this.upgradeFailedAt = performance.now();
      this.markDown(error);
    });
    worker.on('exit', (code) => {
      if (this.upgrade !== worker) return;
      this.stopUpgrade();
      if (code !== 0) return;
      this.log.info({ path: this.path }, 'telemetry store upgraded');
      this.connect();
    });
    worker.unref();
  }

  private markDown(error: unknown): void {
    this.disconnect();
    if (!this.reportedDown) this.log.warn({ err: error, path: this.path }, 'telemetry store unavailable');
    this.reportedDown = true;
    // Opened again soon rather than at the next read: a server is to keep the store open, so
    // that an import beside it shares the store instead of shutting it out (import-transaction.ts).
    this.reconnect = setTimeout(() => {
      this.reconnect = null;
      this.connect();
    }, RECONNECT_MS);
    this.reconnect.unref();
  }
}
