import type { RequestRecord } from '../stores/telemetry/request-record.js';
import { RollupSums } from '../stores/telemetry/rollup-sums.js';
import { rollupRows, type RollupRows } from '../stores/telemetry/rollup-writer.js';
import { SearchPlanner, type BlockCounts, type SearchLookups, type Share } from '../stores/telemetry/search-planner.js';
import { ownTexts, searchTexts, type FilledEpoch } from '../stores/telemetry/search-terms.js';
import { RequestColumnsBuilder, requestCopyLines, type RequestColumns } from './request-columns.js';

/** Rows per batch: large enough that passing a batch between threads costs little per row. */
export const BATCH_ROWS = 2_048;

/**
 * Rows of an import, ready for the writer: everything that needs no write is done here, on
 * the thread that reads the rows (import-worker.ts), so the writer's thread spends its time
 * in SQLite (but the rollup cells of parsed rows: record-requests.ts, `ImportWriter`). Rows and
 * terms are numbered here, on from the store's last ones.
 */
export interface ImportBatch {
  /** The rows, with the rowids they are written under. */
  rows: RequestColumns;
  /**
   * Each row's columns as a line of COPY's text format (no newline), when asked for: made here
   * rather than by the writer, whose thread a copy into an empty PostgreSQL log keeps busy.
   */
  copyLines: string[] | null;
  /** Each row's line in its source, when the source has lines. */
  lines: number[] | null;
  /** The file of every row of the batch, when the source names it (one of several): a batch never spans two. */
  file: string | null;
  /** The id of the batch's first new term; the others follow in row order. */
  firstTerm: number;
  /** Each row's new search terms (`PlannedRow` in search-planner.ts; columns, not objects: cheaper to pass between threads). */
  newTerms: string[][];
  /** Each row's shared terms' tokens, or null. */
  tokens: (string | null)[];
  /** Terms become shared, epochs of terms and of rows filled: written after the batch's rows. */
  shares: Share[];
  filled: FilledEpoch[];
  filledRows: FilledEpoch[];
  /** Cost of the batch's rows per key. */
  spend: Map<string, number>;
  /** Rollup rows to add (coarser grains summed, sketches encoded): when enough cells are held, and with the last batch. */
  rollups: RollupRows | null;
  /** The search index's block spans and counts: with the last batch (when it is planned). */
  counts: BlockCounts | null;
  /** The source's last batch: what was held for the end comes with it. */
  last: boolean;
}

/** What a source says of the record it read last (import-source.ts, `SourceRows`). */
export interface RecordPlace {
  /** Its line in the source. */
  line?: () => number;
  /** Its file, when the source reads several. */
  file?: () => string;
  /**
   * Its metadata as an object, whose JSON the record's `metadata` is: the search planning reads it
   * as it is rather than parsing that JSON again.
   */
  metadata?: () => Readonly<Record<string, string>>;
}

/**
 * Cuts `records` into batches, numbering rows and terms from `lookups` (the store as the
 * writer found it when it took the write lock), or planning no SQLite search index when it is
 * null (PostgreSQL's is made by its writer), summing no rollup cells unless `sumRollups` (the
 * fine grains' only from `fineFrom`, the store's `fineCellsFrom`), and writing the rows' COPY
 * lines when `copyLines`. `RecordPlace`'s accessors, when given, say where the record just read
 * is; a new file starts a new batch. The last batch carries what is still held (it has no rows
 * when the records ran out at a batch's end). When reading a record throws, the rows read before
 * it come as a batch first.
 */
export function* importBatches(
  records: Iterable<RequestRecord>,
  lookups: SearchLookups | null,
  {
    line,
    file,
    metadata,
    sumRollups = true,
    copyLines = false,
    fineFrom = -Infinity,
  }: RecordPlace & { sumRollups?: boolean; copyLines?: boolean; fineFrom?: number } = {},
): Generator<ImportBatch> {
  const sums = sumRollups ? new RollupSums() : null;
  const search = lookups && new SearchPlanner(lookups);
  // SQLite's store (whose search index is planned here) keeps metadata by its shape, PostgreSQL's as text.
  const columns = new RequestColumnsBuilder(BATCH_ROWS, { shapes: lookups !== null });
  // The rows, search changes and the rest collected apart, put together at the batch's end.
  const start = (): Omit<ImportBatch, 'rows' | 'copyLines' | 'shares' | 'filled' | 'filledRows'> => ({
    lines: line ? [] : null,
    file: file?.() ?? null,
    firstTerm: search?.term ?? 0,
    newTerms: [],
    tokens: [],
    spend: new Map(),
    rollups: null,
    counts: null,
    last: false,
  });
  const end = (batch: ReturnType<typeof start>): ImportBatch => {
    const rows = columns.take();
    return {
      ...batch,
      rows,
      copyLines: copyLines ? requestCopyLines(rows) : null,
      ...(search ? search.takeChanges() : { shares: [], filled: [], filledRows: [] }),
    };
  };
  let batch = start();
  const iterator = records[Symbol.iterator]();
  for (;;) {
    let next: IteratorResult<RequestRecord>;
    try {
      next = iterator.next();
    } catch (error) {
      // The rows before a bad one go to the writer first, so that a fault among them (a
      // repeated request id) is the one reported: the first in the source.
      yield end(batch);
      throw error;
    }
    if (next.done) break;
    const record = next.value;
    if (file && file() !== batch.file) {
      if (columns.length > 0) {
        yield end(batch);
        batch = start();
      } else batch.file = file();
    }
    columns.add(record, search?.rowid ?? 0);
    if (search) {
      const planned = search.plan(record.org_id, record.ts, searchTexts(record, metadata?.()), ownTexts(record));
      batch.newTerms.push(planned.newTerms);
      batch.tokens.push(planned.tokens);
    }
    batch.lines?.push(line!());
    if (record.key_id) batch.spend.set(record.key_id, (batch.spend.get(record.key_id) ?? 0) + record.cost_micro);
    sums?.add(record);
    if (sums?.full()) batch.rollups = rollupRows(sums.take()!, fineFrom);
    if (columns.length === BATCH_ROWS || batch.rollups) {
      yield end(batch);
      batch = start();
    }
  }
  const cells = sums?.take() ?? null;
  batch.rollups = cells && rollupRows(cells, fineFrom);
  batch.counts = search?.takeCounts() ?? null;
  batch.last = true;
  yield end(batch);
}
