import type { RequestRecord } from '../stores/telemetry/request-record.js';
import type { StoredLookups } from '../stores/telemetry/search-planner.js';
import type { ImportBatch, RecordPlace } from './import-batches.js';

/**
 * Where the rows of an import read on a thread of its own come from (import-worker.ts): the
 * module that reads them and its arguments, plain data passed to that thread as is. The
 * pipeline knows no source: each names itself (`importSource(import.meta.url, ...)`), and
 * the reading thread loads it there and calls its `readRows`.
 */
export interface ImportSource<Args = unknown> {
  /**
   * The URL of a module that exports `readRows: SourceReader<Args>`: its own `import.meta.url`,
   * a `.ts` file run from source, a `.js` one once built, as the thread that names it runs.
   */
  reader: string;
  /** Copied to the reading thread (structured clone): no functions, no class instances. */
  args: Args;
  /**
   * Its rows are parsed from text (NDJSON), which keeps the reading thread busier than the
   * writer's: the writer then sums their rollup cells (record-requests.ts, `ImportWriter`).
   */
  parsed: boolean;
}

/** A source's rows, read on the import's thread, and what it says of the row it read last. */
export interface SourceRows extends RecordPlace {
  records: Iterable<RequestRecord>;
}

/** What a source module exports as `readRows`: its arguments made into rows. */
export type SourceReader<Args> = (args: Args) => SourceRows;

/** `reader`, a source module's `import.meta.url`, with the arguments its `readRows` takes. */
export function importSource<Args>(reader: string, args: Args, { parsed = false } = {}): ImportSource<Args> {
  return { reader, args, parsed };
}

/**
 * A row of a source that cannot be imported; its message names the line, and the file when
 * given (one of several). The writer sees it as an `ImportSourceError` with the code `LINE`.
 */
export class LineError extends Error {
  constructor(line: number, message: string, file: string | null = null) {
    super(`${placeOf(file, line)}: ${message}`);
  }
}

/** "line 3", or "logs/a.ndjson line 3" when the file is named. */
export function placeOf(file: string | null, line: number | null): string {
  const at = `line ${line ?? '?'}`;
  return file === null ? at : `${file} ${at}`;
}

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
   * terms. Null when it had no rows, or when the writer has it alone and hands over `lookups`
   * (import-transaction.ts: other connections are shut out).
   */
  storePath: string | null;
  /** The store's search lookups read whole by the writer, when it has the store alone with rows. */
  lookups: StoredLookups | null;
  /** Whether the rows go to SQLite, whose search index this thread plans (PostgreSQL's writer makes its own). */
  planSearch: boolean;
  /** Whether this thread sums the rows' rollup cells (not when they are copied as they are: `ImportProgress.cells`). */
  sumRollups: boolean;
  /** The fine grains' cells are summed from this time on only (the store's `fineCellsFrom`; -Infinity: all). */
  fineFrom: number;
  /** Whether this thread writes each row's columns as COPY text too (`ImportBatch.copyLines`): into an empty PostgreSQL log. */
  copyLines: boolean;
  /** Int32Array over a SharedArrayBuffer, indexed by `FLOW`. */
  flow: Int32Array;
}
