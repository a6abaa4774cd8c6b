import { parentPort, workerData } from 'node:worker_threads';
import BetterSqlite3 from 'better-sqlite3';
import { LineError, ndjsonRecords } from '../admin/ndjson-records.js';
import { demoTraffic } from '../demo/traffic.js';
import type { RequestRecord } from '../stores/telemetry/request-record.js';
import { importBatches } from './import-batches.js';
import { FLOW, type ImportMessage, type ImportSource, type ImportWorkerData } from './import-source.js';

/**
 * Reads an import's rows and prepares them (import-batches.ts) beside the writer's thread,
 * which only writes them (record-requests.ts). Runs at most `AHEAD` batches ahead of the
 * writer, so memory stays flat however many rows there are.
 */
const AHEAD = 4;

const { source, flow } = workerData as ImportWorkerData;
const post = (message: ImportMessage) => parentPort!.postMessage(message);

/** Waits until the writer is at most `AHEAD - 1` batches behind; false when it asks to stop. */
function room(): boolean {
  for (;;) {
    if (Atomics.load(flow, FLOW.stop) !== 0) return false;
    const written = Atomics.load(flow, FLOW.written);
    if (Atomics.load(flow, FLOW.sent) - written < AHEAD) return true;
    Atomics.wait(flow, FLOW.written, written, 1_000);
  }
}

function read(source: ImportSource): { records: Iterable<RequestRecord>; line?: () => number; close(): void } {
  if (source.kind === 'demo') return { records: demoTraffic(source.plan), close: () => {} };
  // Rows committed before this import; the writer refuses a repeat within it.
  const store = new BetterSqlite3(source.telemetryPath, { readonly: true, fileMustExist: true });
  const seen = store.prepare<[string], { one: number }>('SELECT 1 AS one FROM requests WHERE req_id = ?');
  const at = { line: 0 };
  return {
    records: ndjsonRecords(source.file, source.owners, (reqId) => seen.get(reqId) !== undefined, at),
    line: () => at.line,
    close: () => store.close(),
  };
}

try {
  const { records, line, close } = read(source);
  try {
    for (const batch of importBatches(records, line)) {
      if (!room()) break;
      post({ kind: 'batch', batch });
      Atomics.add(flow, FLOW.sent, 1);
    }
  } finally {
    close();
  }
  post({ kind: 'done' });
} catch (error) {
  // Errors reach the writer as text: classes do not survive the thread boundary.
  const code = error instanceof LineError ? 'LINE' : ((error as NodeJS.ErrnoException).code ?? null);
  post({ kind: 'failed', message: error instanceof Error ? error.message : String(error), code });
}
