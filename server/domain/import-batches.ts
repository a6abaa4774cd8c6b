import { requestValues, type RequestRecord } from '../stores/telemetry/request-record.js';
import { RollupSums, type RollupCells } from '../stores/telemetry/rollup-sums.js';
import { casefold } from '../stores/telemetry/search-terms.js';

/** Rows per batch: large enough that passing a batch between threads costs little per row. */
export const BATCH_ROWS = 2_048;

/**
 * Rows of an import, ready for the writer: everything that needs no database is done here,
 * on the thread that reads the rows (import-worker.ts), so the writer's thread spends its
 * time in SQLite.
 */
export interface ImportBatch {
  /** Each row's values in `REQUEST_COLUMNS` order. */
  values: ReturnType<typeof requestValues>[];
  /**
   * Each row's search texts, casefolded: its request id first, then each metadata key and
   * string value once.
   */
  texts: string[][];
  /** Each row's line in its source, when the source has lines. */
  lines: number[] | null;
  /** Cost of the batch's rows per key. */
  spend: Map<string, number>;
  /** Rollup cells to add: when enough are held, and with the last batch. */
  rollups: RollupCells | null;
}

/** The search texts of a row: its request id, then its metadata's keys and string values, each once. */
export function searchTexts(row: RequestRecord): string[] {
  const texts = new Set<string>([casefold(row.req_id)]);
  for (const [key, value] of Object.entries(JSON.parse(row.metadata) as Record<string, unknown>)) {
    texts.add(casefold(key));
    if (typeof value === 'string') texts.add(casefold(value));
  }
  return [...texts];
}

/**
 * Cuts `records` into batches. `line`, when given, says the source line of the record just
 * read. The last batch carries the rollup cells still held (an empty one when no row is left).
 */
export function* importBatches(records: Iterable<RequestRecord>, line?: () => number): Generator<ImportBatch> {
  const sums = new RollupSums();
  const empty = (): ImportBatch => ({
    values: [],
    texts: [],
    lines: line ? [] : null,
    spend: new Map(),
    rollups: null,
  });
  let batch = empty();
  for (const record of records) {
    batch.values.push(requestValues(record));
    batch.texts.push(searchTexts(record));
    batch.lines?.push(line!());
    if (record.key_id) batch.spend.set(record.key_id, (batch.spend.get(record.key_id) ?? 0) + record.cost_micro);
    sums.add(record);
    if (sums.full()) batch.rollups = sums.take();
    if (batch.values.length === BATCH_ROWS || batch.rollups) {
      yield batch;
      batch = empty();
    }
  }
  batch.rollups = sums.take();
  yield batch;
}
