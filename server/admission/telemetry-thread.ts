import { parentPort, workerData } from 'node:worker_threads';
import { RequestRecorder } from '../ingest/record-requests.js';
import { openControlStore } from '../stores/control/open.js';
import { expireRows } from '../stores/telemetry/expire-rows.js';
import { expireTerms } from '../stores/telemetry/expire-terms.js';
import { thinFineCells } from '../stores/telemetry/fine-cells.js';
import { PgRequestLog } from '../stores/telemetry/postgres/request-log.js';
import { openTelemetry } from '../stores/telemetry/store.js';
import { lowerThisThreadsPriority } from '../worker-threads.js';
import type { FromTelemetryThread, TelemetryThreadData, ToTelemetryThread } from './telemetry-messages.js';

type ExpiryMessage = Extract<ToTelemetryThread, { kind: 'expire' }>;

/**
 * How many nice steps this thread runs below the server (Linux): as the analytics threads
 * (ANALYTICS_NICE), enough for the event loop to win a shared core, not so many that a
 * saturated machine starves the writing and rows pile up.
 */
const TELEMETRY_NICE = 4;

/**
 * Writes the gateways' rows off the control plane's event loop: opening the store, the
 * transaction and its fsyncs take milliseconds that requests (the gateway's admissions
 * first) would otherwise wait behind. One batch at a time, as `LiveTelemetry` sends them.
 */
const { controlLocation, telemetry: location, busyTimeoutMs } = workerData as TelemetryThreadData;
// Rows wait for the next flush anyway: the gateway's requests on the event loop come first.
lowerThisThreadsPriority(TELEMETRY_NICE);
// Sessions are never read here: the lifetimes only complete the store's options.
const control = await openControlStore(controlLocation, { accessSeconds: 1, refreshSeconds: 1 });
// One batch at a time: one connection.
const telemetry = 'url' in location ? await PgRequestLog.open(location.url, { connections: 1 }) : location.path;
const recorder = new RequestRecorder(telemetry);
const post = (message: FromTelemetryThread) => parentPort!.postMessage(message);
/** A store older than this server is migrated by whichever connection opens it first: named in the server's log. */
const upgrading = (migration: string) => post({ kind: 'upgrading', migration });

/** A step of retention's deletion (`ExpiryStep`) in the SQLite store, on a connection of its own beside the rows' (RequestRecorder). */
function expireInFile(
  path: string,
  { step, orgId, before, limit }: ExpiryMessage,
  opened: () => void,
): { rows: number; terms: number; cells: number; more: boolean } {
  const db = openTelemetry(path, { busyTimeoutMs, upgrading });
  try {
    opened();
    if (step === 'terms') return { rows: 0, cells: 0, ...expireTerms(db, orgId) };
    if (step === 'cells') return { rows: 0, terms: 0, ...thinFineCells(db, before) };
    const rows = expireRows(db, orgId, before, limit);
    return { rows, terms: 0, cells: 0, more: rows === limit };
  } finally {
    db.close();
  }
}

/**
 * On PostgreSQL a row's search entries are columns of the row: they go with it, and the terms step
 * has nothing to do; nor has the cells step: its writers keep every cell (009_fine_cells.sql).
 */
async function expireInDatabase(
  log: PgRequestLog,
  { step, orgId, before, limit }: ExpiryMessage,
): Promise<{ rows: number; terms: number; cells: number; more: boolean }> {
  if (step !== 'rows') return { rows: 0, terms: 0, cells: 0, more: false };
  const rows = await log.expire(orgId, before, limit);
  return { rows, terms: 0, cells: 0, more: rows === limit };
}

/** Handles one message; the next waits for it, so a close comes after the batch before it. */
async function handle(message: ToTelemetryThread): Promise<void> {
  if (message.kind === 'close') {
    await control.close();
    recorder.close();
    if (typeof telemetry !== 'string') await telemetry.close();
    parentPort!.close();
    return;
  }
  if (message.kind === 'expire') {
    // On SQLite, from the store opened (the transaction's start) to its commit.
    let transaction: number | undefined;
    try {
      const started = performance.now();
      const done =
        typeof telemetry === 'string'
          ? expireInFile(telemetry, message, () => (transaction = performance.now()))
          : await expireInDatabase(telemetry, message);
      post({ kind: 'expired', id: message.id, ...done, ms: performance.now() - (transaction ?? started) });
    } catch (error) {
      post({ kind: 'failed', id: message.id, message: error instanceof Error ? error.message : String(error) });
    }
    return;
  }
  try {
    await recorder.record(control, message.rows, {
      busyTimeoutMs,
      skipStored: true,
      report: (event) => {
        if (event.kind === 'unsettled') post({ kind: 'unsettled', message: event.message });
        if (event.kind === 'upgrading') upgrading(event.migration);
      },
    });
    post({ kind: 'written', id: message.id });
  } catch (error) {
    post({ kind: 'failed', id: message.id, message: error instanceof Error ? error.message : String(error) });
  }
}

let turn = Promise.resolve();
parentPort!.on('message', (message: ToTelemetryThread) => {
  turn = turn
    .then(() => handle(message))
    // A batch's failure is answered; what else fails (closing) ends the thread as an uncaught
    // error would, reported to the server, without leaving the chain rejected for later batches.
    .catch((error: unknown) => {
      setImmediate(() => {
        throw error;
      });
    });
});
