import { parentPort, workerData } from 'node:worker_threads';
import { openTelemetry } from './store.js';

/**
 * Brings a telemetry store up to date off the server's main thread (TelemetryStore starts
 * it): a migration of a large store takes minutes, and an import may hold the write lock
 * for as long, so this waits for the lock far longer than a request would.
 */
const { path } = workerData as { path: string };
try {
  openTelemetry(path, {
    upgrading: (migration) => parentPort?.postMessage(migration),
    busyTimeoutMs: 10 * 60_000,
  }).close();
} catch (error) {
  // SqliteError reaches the parent thread without its message: a plain Error keeps it.
  throw new Error(error instanceof Error ? error.message : String(error));
}
