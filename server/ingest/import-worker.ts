import { parentPort, workerData } from 'node:worker_threads';
import BetterSqlite3 from 'better-sqlite3';
import { lookupsFrom, NO_ROWS, searchLookups } from '../stores/telemetry/search-planner.js';
import { importBatches } from './import-batches.js';
import {
  FLOW,
  LineError,
  type ImportMessage,
  type ImportSource,
  type ImportWorkerData,
  type SourceReader,
  type SourceRows,
} from './import-source.js';

/**
 * Reads an import's rows and prepares them (import-batches.ts) beside the writer's thread,
 * which only writes them (record-requests.ts). Runs at most `AHEAD` batches ahead of the
 * writer, so memory stays flat however many rows there are (a batch is ~1.5 MB passed, up
 * to ~25 MB when it carries rollups). Sixteen rather than four: the writer spends long on a
 * batch that carries rollups, and four left the reader waiting then and the writer idle
 * after. 500k NDJSON rows into an empty store, alternating runs: ~10.1 s with 32 ahead
 * against ~12.4 s with four; 16, 32 and 64 alike.
 */
const AHEAD = 16;

const { source, storePath, lookups, planSearch, sumRollups, fineFrom, copyLines, flow } =
  workerData as ImportWorkerData;
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

/** The source's rows: its module loaded on this thread, once, and asked for them. */
async function read(source: ImportSource): Promise<SourceRows> {
  const { readRows } = (await import(source.reader)) as { readRows?: SourceReader<unknown> };
  if (typeof readRows !== 'function') throw new Error(`the import source ${source.reader} exports no readRows`);
  return readRows(source.args);
}

try {
  // Sees the store as the writer found it: the writer holds the write lock and commits at the end.
  const db = storePath === null ? null : new BetterSqlite3(storePath, { readonly: true, fileMustExist: true });
  try {
    const { records, line, file, metadata } = await read(source);
    const found = !planSearch ? null : lookups ? lookupsFrom(lookups) : db ? searchLookups(db) : NO_ROWS;
    for (const batch of importBatches(records, found, { line, file, metadata, sumRollups, fineFrom, copyLines })) {
      if (!room()) break;
      post({ kind: 'batch', batch });
      Atomics.add(flow, FLOW.sent, 1);
    }
  } finally {
    db?.close();
  }
  post({ kind: 'done', batches: Atomics.load(flow, FLOW.sent) });
} catch (error) {
  // Errors reach the writer as text: classes do not survive the thread boundary.
  const code = error instanceof LineError ? 'LINE' : ((error as NodeJS.ErrnoException).code ?? null);
  post({ kind: 'failed', message: error instanceof Error ? error.message : String(error), code });
}
