import BetterSqlite3, { type Database } from 'better-sqlite3';
import { parentPort, workerData } from 'node:worker_threads';
import { lowerThisThreadsPriority } from '../worker-threads.js';
import { AnalyticsQueries } from './queries.js';
import { SqliteSql } from './sqlite-sql.js';
import type { AnalyticsQuery } from './query-types.js';
import { warmUp } from './warm-up.js';

export interface WorkerJob {
  id: number;
  query: AnalyticsQuery;
}

/** Sent once the worker has loaded, so its start-up never counts against a job's deadline. */
export const WORKER_READY = 'ready';

export type WorkerReply =
  | { id: number; ok: true; result: unknown }
  /** `unavailable`: the store could not be opened or read; anything else is a bug. */
  | { id: number; ok: false; unavailable: boolean; message: string };

/**
 * What the pool gives each worker: its store, how far below the server to run (see pool.ts),
 * and the organisations whose first screens it runs once before taking jobs (warm-up.ts).
 */
export interface WorkerData {
  path: string;
  nice: number;
  warmOrgIds: string[];
}

const { path, nice, warmOrgIds } = workerData as WorkerData;
let db: Database | null = null;
let queries: AnalyticsQueries | null = null;

/** Opened read-only on first use and again after any failure, so a store that comes back is picked up. */
function connection(): AnalyticsQueries {
  if (!queries) {
    db = new BetterSqlite3(path, { readonly: true, fileMustExist: true });
    db.pragma('busy_timeout = 5000');
    queries = new AnalyticsQueries(new SqliteSql(db));
  }
  return queries;
}

function reset(): void {
  try {
    db?.close();
  } catch {
    // Closing a broken connection may fail too; it is dropped either way.
  }
  db = null;
  queries = null;
}

lowerThisThreadsPriority(nice);
try {
  // Opened before the pool is told this worker is ready: a job's time limit counts its query alone.
  connection();
  await warmUp(connection, warmOrgIds, Date.now());
} catch {
  // A store that cannot be read yet is opened again by the first job, which reports it.
  reset();
}
parentPort?.postMessage(WORKER_READY);
parentPort?.on('message', (job: WorkerJob) => void answer(job));

/** Answers one job; the pool sends the next only after the reply. */
async function answer(job: WorkerJob): Promise<void> {
  let reply: WorkerReply;
  try {
    reply = { id: job.id, ok: true, result: await connection().run(job.query) };
  } catch (error) {
    const sqlite =
      error instanceof BetterSqlite3.SqliteError || (error as { code?: string }).code?.startsWith('SQLITE');
    if (sqlite) reset();
    reply = { id: job.id, ok: false, unavailable: Boolean(sqlite), message: (error as Error).message };
  }
  parentPort?.postMessage(reply);
}
