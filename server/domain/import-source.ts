import type { Owners } from '../admin/ndjson-records.js';
import type { TrafficPlan } from '../demo/traffic.js';
import type { ImportBatch } from './import-batches.js';

/**
 * Where the rows of an import read on a thread of its own come from (import-worker.ts):
 * plain data, passed to that thread as is.
 */
export type ImportSource =
  /** The demo organisation's generated traffic. */
  | { kind: 'demo'; plan: TrafficPlan }
  /** An NDJSON file; a request id already in the store is refused. */
  | { kind: 'ndjson'; file: string; owners: Owners };

/** The worker's messages, in order: batches, then `done` or `failed`. */
export type ImportMessage =
  | { kind: 'batch'; batch: ImportBatch }
  | { kind: 'done'; batches: number }
  | { kind: 'failed'; message: string; code: string | null };

/** Slots of the flow-control array shared with the worker. */
export const FLOW = { sent: 0, written: 1, stop: 2 } as const;

export interface ImportWorkerData {
  source: ImportSource;
  /**
   * The store the writer holds the write lock of: read for the numbering and the shared search
   * terms. Null when it had no rows (and may be shut to other connections: import-transaction.ts).
   */
  storePath: string | null;
  /** Int32Array over a SharedArrayBuffer, indexed by `FLOW`. */
  flow: Int32Array;
}
