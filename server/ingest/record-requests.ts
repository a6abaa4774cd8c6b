import { on } from 'node:events';
import { totalmem } from 'node:os';
import type { Database } from 'better-sqlite3';
import type { ControlStore } from '../stores/control/store.js';
import type { RequestRecord } from '../stores/telemetry/request-record.js';
import {
  beginImport,
  commitImport,
  endImport,
  type ImportTransaction,
} from '../stores/telemetry/import-transaction.js';
import { fineCellsFrom, recordFineCellsFrom } from '../stores/telemetry/fine-cells.js';
import { RollupSums } from '../stores/telemetry/rollup-sums.js';
import { rollupRows, RollupWriter } from '../stores/telemetry/rollup-writer.js';
import { searchLookups, type SearchLookups } from '../stores/telemetry/search-planner.js';
import { RequestStrings, storedRequestId } from '../stores/telemetry/request-rows.js';
import { SearchWriter } from '../stores/telemetry/search-writer.js';
import type { CellPart } from '../stores/telemetry/postgres/request-import.js';
import type { PgRequestLog } from '../stores/telemetry/postgres/request-log.js';
import { storableText } from '../stores/telemetry/postgres/request-sql.js';
import { openTelemetry } from '../stores/telemetry/store.js';
import { startWorker, workerUrl } from '../worker-threads.js';
import { importBatches, type ImportBatch } from './import-batches.js';
import { FLOW, type ImportMessage, type ImportSource, type ImportWorkerData } from './import-source.js';
import { orgIdAt, recordAt, reqIdAt, requestArrays, rowidAt, type RequestColumns } from './request-columns.js';
import { RequestInserts } from './request-inserts.js';
import { recordSpend, settleOutstandingSpend, settleSpend, sqliteOutbox, type SpendOutbox } from './spend-outbox.js';

const MAX_IMPORT_CACHE_KIB = 2 * 1024 * 1024;

/**
 * The reading thread's young generation. It makes a batch's objects and keeps them until
 * the batch is posted: in V8's default young generation many outlive a scavenge or two and
 * are copied, by helper threads that compete with both of the import's for two cores.
 * Measured, 500k demo rows in alternating runs: ~11 % less CPU a row, ~8 % more rows a second.
 */
const READER_YOUNG_GENERATION_MB = 96;

function importCacheKib(): number {
  return Math.max(65_536, Math.min(MAX_IMPORT_CACHE_KIB, Math.floor(totalmem() / 8 / 1024)));
}

/** What a long import tells its operator while it runs. */
export type ImportEvent =
  /** A migration is about to run on the existing store (minutes on a large one). */
  | { kind: 'upgrading'; migration: string }
  /** Rows written so far, each time another `ImportProgress.every` are, and the milliseconds they took. */
  | { kind: 'written'; rows: number; ms: number }
  /**
   * The request log on PostgreSQL was empty: the import holds it alone until its commit (the
   * servers on it wait), and builds its indexes after the rows.
   */
  | { kind: 'empty-log' }
  /** Every row is written; the rollups, the search index's last blocks and the commit remain. */
  | { kind: 'committing'; rows: number }
  /**
   * The rows are committed, but their spend could not be settled into the keys yet (the control
   * store busy, say): it waits in the outbox for the next start or commit, never lost.
   */
  | { kind: 'unsettled'; message: string };

export interface ImportProgress {
  report: (event: ImportEvent) => void;
  /** Rows between two `written` events; 100,000 by default (a few seconds of import). */
  every?: number;
  /** How long to wait for another writer's lock on the telemetry store; 5 s by default. */
  busyTimeoutMs?: number;
  /**
   * Rows whose request id is already stored are skipped rather than refused (a gateway's batch
   * sent again after a lost answer). Checked under the write lock, so no other writer slips one in.
   */
  skipStored?: boolean;
  /**
   * The rows are copied from another store, whose spend the keys hold already (migrate-store):
   * none is recorded or settled. PostgreSQL only.
   */
  copying?: boolean;
  /**
   * The rows' rollup cells, copied as they are rather than summed again from the rows (migrate-store,
   * from a store that keeps them in its rows' transactions), and what each table's first measure
   * adds up to there, checked before the commit. PostgreSQL only.
   */
  cells?: CopiedCells;
  /**
   * The fine rollup cells' start to record before writing, as a server's sweep would at this
   * moment (rollup-grains.ts, `fineCellsSince`): an import of old rows then writes none of theirs
   * (fine-cells.ts). SQLite only: PostgreSQL's writers keep every cell.
   */
  fineCellsSince?: number;
}

export interface CopiedCells {
  parts: Iterable<CellPart>;
  /** In `ROLLUP_TABLES` order. */
  sums: bigint[];
}

/** The import's reader failed (a bad NDJSON line, a missing file): nothing was written. */
export class ImportSourceError extends Error {
  constructor(
    message: string,
    /** `LINE` for a line that cannot be imported, else the system error's code, if any. */
    readonly code: string | null,
  ) {
    super(message);
  }
}

/** A request id already in the store or earlier in the import: nothing was written. */
export class RepeatedRequest extends Error {
  constructor(
    readonly reqId: string,
    /** The line of the row that repeats an id stored or earlier in the source, when it has lines. */
    readonly line: number | null,
    /** Its file, when the source names it (one of several). */
    readonly file: string | null = null,
  ) {
    super(`request id ${reqId} was already imported`);
  }
}

/** The page cache of a connection kept between batches: the pages every batch writes, not a whole index. */
const KEPT_CACHE_KIB = 16 * 1024;

/**
 * Writes request-log rows held in memory, batch after batch (the gateways' rows on their writing
 * thread; a test's few), then settles their cost into each key's spend. On SQLite (a store's
 * path) they are prepared on this thread (see `ImportWriter`), and the store's connection and its
 * row statements are kept from one batch to the next: opening them took ~5 ms of a 100-row
 * batch's ~20. After a batch fails they are opened anew, since its rollback may have taken back
 * strings whose codes their caches hold. On PostgreSQL the rows are written with their rollups
 * and spend in one transaction (`PgRequestLog.write`).
 */
export class RequestRecorder {
  private statements: RowStatements | null = null;

  constructor(private readonly telemetry: string | PgRequestLog) {}

  async record(control: ControlStore, records: Iterable<RequestRecord>, progress?: ImportProgress): Promise<number> {
    if (typeof this.telemetry !== 'string') return recordInPostgres(control, this.telemetry, records, progress);
    this.statements ??= openRowStatements(this.telemetry, progress, KEPT_CACHE_KIB);
    let written: number | null = null;
    try {
      const writer = new ImportWriter(this.statements, progress);
      try {
        const fresh = progress?.skipStored ? writer.unstored(records) : records;
        for (const batch of importBatches(fresh, writer.lookups(), { fineFrom: writer.fineFrom })) writer.write(batch);
        await writer.commit(control);
        written = writer.written;
      } finally {
        writer.end();
      }
    } finally {
      if (written === null) this.close();
    }
    return written;
  }

  close(): void {
    this.statements?.db.close();
    this.statements = null;
  }
}

/** Rows held in memory written once (`RequestRecorder`), with a connection of their own. */
export async function recordRequests(
  control: ControlStore,
  telemetry: string | PgRequestLog,
  records: Iterable<RequestRecord>,
  progress?: ImportProgress,
): Promise<number> {
  const recorder = new RequestRecorder(telemetry);
  try {
    return await recorder.record(control, records, progress);
  } finally {
    recorder.close();
  }
}

async function recordInPostgres(
  control: ControlStore,
  log: PgRequestLog,
  records: Iterable<RequestRecord>,
  progress?: ImportProgress,
): Promise<number> {
  const rows = [...records];
  const result = await log.write(rows, { skipStored: progress?.skipStored });
  if (result.repeated) throw new RepeatedRequest(result.repeated.req_id, null);
  await settleCommitted(control, log, result.settlement, progress);
  return result.written;
}

/**
 * Settles the spend just committed under `settlement`, and any a crash left. Nothing throws:
 * spend that cannot be settled now stays in the outbox.
 */
async function settleCommitted(
  control: ControlStore,
  outbox: SpendOutbox,
  settlement: string | null,
  progress: ImportProgress | undefined,
): Promise<void> {
  try {
    if (settlement !== null) await settleSpend(control, outbox, settlement);
    await settleOutstandingSpend(control, outbox);
  } catch (error) {
    progress?.report({ kind: 'unsettled', message: (error as Error).message });
  }
}

/**
 * Writes the rows of a file or of generated traffic, read and prepared on a thread of their
 * own while this one writes them, then settles their cost into each key's spend. See
 * `ImportWriter`. The transaction stays open across the awaits for the reader's batches:
 * the connection is the import's alone, and the write lock keeps other writers out.
 */
export async function recordRequestsFrom(
  control: ControlStore,
  telemetry: string | PgRequestLog,
  source: ImportSource,
  progress?: ImportProgress,
): Promise<number> {
  if (typeof telemetry !== 'string') return importIntoPostgres(control, telemetry, source, progress);
  // A long import touches index pages all over the file (request ids and costs are random keys:
  // at ten million rows those two indexes are ~1 GB): keep them in memory, on this connection
  // only, within an eighth of the machine's memory.
  const statements = openRowStatements(telemetry, progress, importCacheKib());
  try {
    return await importRows(control, statements, source, progress);
  } finally {
    statements.db.close();
  }
}

async function importRows(
  control: ControlStore,
  statements: RowStatements,
  source: ImportSource,
  progress: ImportProgress | undefined,
): Promise<number> {
  const writer = new ImportWriter(statements, progress, { withRows: true, sumRollups: source.parsed });
  try {
    const reading = {
      ...writer.readerStore(),
      planSearch: true,
      // Else the writer sums them (`ImportWriter.sumRollups`).
      sumRollups: !source.parsed,
      fineFrom: writer.fineFrom,
      copyLines: false,
    };
    const batches = readInWorker(source, reading);
    try {
      // Starts the reading thread, whose first batch takes a few hundred milliseconds to come.
      const first = batches.next();
      let arrived = false;
      // Awaited below; should reading ahead fail, its failure must not go unhandled.
      first.then(
        () => (arrived = true),
        () => (arrived = true),
      );
      while (!arrived && writer.readAhead()) await new Promise(setImmediate);
      for (let next = await first; !next.done; next = await batches.next()) writer.write(next.value);
    } finally {
      await batches.return(undefined);
    }
    await writer.commit(control);
  } finally {
    writer.end();
  }
  return writer.written;
}

/**
 * An import into PostgreSQL, read and prepared by the same thread as for SQLite (but SQLite's
 * search planning: PostgreSQL's writer makes its own search columns). One transaction, as on
 * SQLite. A batch's rows are sent before the last batch's are checked, so that this thread
 * prepares the next batch while the database writes one (measured, a copy of a million rows into
 * an empty log: 89 -> 79 s).
 */
async function importIntoPostgres(
  control: ControlStore,
  log: PgRequestLog,
  source: ImportSource,
  progress?: ImportProgress,
): Promise<number> {
  const started = performance.now();
  const spend = new Map<string, number>();
  const every = progress?.every ?? 100_000;
  let written = 0;
  const write = await log.beginImport();
  if (write.intoEmpty) progress?.report({ kind: 'empty-log' });
  let settlement: string | null;
  /** The batch sent and not yet checked. */
  let sent: Sent | null = null;
  /** Checks the batch sent, if any, then counts its rows as written. */
  const confirmSent = async () => {
    if (!sent) return;
    const { rows, lines, file, inserted, last } = sent;
    sent = null;
    checkInserted(rows, lines, file, await inserted);
    const before = written;
    written += rows.length;
    for (let mark = before - (before % every) + every; progress && mark <= written; mark += every) {
      progress.report({ kind: 'written', rows: mark, ms: performance.now() - started });
    }
    if (last) progress?.report({ kind: 'committing', rows: written });
  };
  /** Whether a failure comes from writing a batch rather than from reading the next. */
  let writing = false;
  try {
    try {
      const reading = {
        storePath: null,
        lookups: null,
        planSearch: false,
        sumRollups: !progress?.cells,
        // PostgreSQL's writers keep every cell (migrations-postgres/009_fine_cells.sql).
        fineFrom: -Infinity,
        copyLines: write.intoEmpty,
      };
      for await (const batch of readInWorker(source, reading)) {
        writing = true;
        const { rows } = batch;
        const inserted = write.insert(requestArrays(rows), batch.copyLines);
        // Awaited in order below; a failure meanwhile must not go unhandled.
        inserted.catch(() => undefined);
        await confirmSent();
        sent = { rows, lines: batch.lines, file: batch.file, inserted, last: batch.last };
        for (const [keyId, cost] of batch.spend) spend.set(keyId, (spend.get(keyId) ?? 0) + cost);
        if (batch.rollups) await write.stage(batch.rollups);
        writing = false;
      }
    } catch (error) {
      // The reader's fault (a malformed line) comes after the rows sent: a fault in them comes
      // first. So does the fault a write finds the transaction aborted by (25P02: a repeated id
      // failed the COPY of the rows sent, which does not wait for their check); after any other
      // write's failure they could only fail with it.
      if (!writing || (error as { code?: unknown }).code === '25P02') await confirmSent();
      throw error;
    }
    await confirmSent();
    for (const part of progress?.cells?.parts ?? []) await write.addCells(part);
    settlement = await write.commit(progress?.copying ? new Map() : spend, progress?.cells?.sums);
  } finally {
    await write.close();
  }
  if (!progress?.copying) await settleCommitted(control, log, settlement, progress);
  return written;
}

interface Sent {
  rows: RequestColumns;
  lines: number[] | null;
  file: string | null;
  /** The ids the database inserted. */
  inserted: Promise<Set<string>>;
  /** The source's last batch. */
  last: boolean;
}

/** Throws for the first row whose id the database held already, or that the batch repeats. */
function checkInserted(rows: RequestColumns, lines: number[] | null, file: string | null, inserted: Set<string>): void {
  if (inserted.size === rows.length) return;
  for (let i = 0; i < rows.length; i++) {
    const id = reqIdAt(rows, i);
    if (!inserted.delete(storableText(id))) throw new RepeatedRequest(id, lines?.[i] ?? null, file);
  }
}

/** A telemetry store's connection and the statements that write its rows, opened by whoever keeps them. */
interface RowStatements {
  path: string;
  db: Database;
  requests: RequestInserts;
  rollups: RollupWriter;
  search: SearchWriter;
}

function openRowStatements(path: string, progress: ImportProgress | undefined, cacheKib: number): RowStatements {
  const report = progress?.report;
  const db = openTelemetry(path, {
    upgrading: report && ((migration) => report({ kind: 'upgrading', migration })),
    busyTimeoutMs: progress?.busyTimeoutMs,
  });
  try {
    db.pragma(`cache_size = -${cacheKib}`);
    const strings = new RequestStrings(db);
    return {
      path,
      db,
      requests: new RequestInserts(db, strings),
      rollups: new RollupWriter(db),
      search: new SearchWriter(db, strings),
    };
  } catch (error) {
    db.close();
    throw error;
  }
}

/**
 * The writing half of an import. The rows commit in one telemetry transaction, with the spend
 * they add in its outbox: if the source fails part-way (a bad line), nothing is written and
 * nothing settled. The spend then settles in one short control transaction, so a long import
 * never holds the control store's write lock while a server runs on it; a crash between the two
 * commits leaves it in the outbox, settled once at the next start or commit (spend-outbox.ts).
 */
class ImportWriter {
  written = 0;
  /** The store's `fineCellsFrom`, read under the write lock: no fine cell before it is written. */
  readonly fineFrom: number;
  private readonly telemetryPath: string;
  private readonly telemetry: Database;
  private readonly requests: RequestInserts;
  private readonly rollups: RollupWriter;
  private readonly search: SearchWriter;
  private readonly spend = new Map<string, number>();
  /** The rows' rollup cells when this thread sums them (`sumRollups`), and the record each row is read into for them. */
  private readonly sums: RollupSums | null;
  private readonly record = {} as RequestRecord;
  private transaction: ImportTransaction;
  /** From the write lock on: the rate reported leaves out migrations. */
  private started = 0;

  /**
   * `withRows`: the store may be taken alone even with rows (`beginImport`). `sumRollups`: this
   * thread sums the rows' rollup cells, not the reading thread (`sumRollups` below).
   */
  constructor(
    statements: RowStatements,
    private readonly progress: ImportProgress | undefined,
    { withRows = false, sumRollups = false } = {},
  ) {
    this.sums = sumRollups ? new RollupSums() : null;
    ({
      path: this.telemetryPath,
      db: this.telemetry,
      requests: this.requests,
      rollups: this.rollups,
      search: this.search,
    } = statements);
    this.transaction = beginImport(this.telemetry, { withRows });
    try {
      // In the import's transaction: a failed import leaves the start as it was.
      if (progress?.fineCellsSince !== undefined) recordFineCellsFrom(this.telemetry, progress.fineCellsSince);
      this.fineFrom = fineCellsFrom(this.telemetry);
      this.started = performance.now();
    } catch (error) {
      endImport(this.telemetry, this.transaction);
      throw error;
    }
  }

  write(batch: ImportBatch): void {
    const { rows, newTerms, tokens, lines } = batch;
    const repeat = this.requests.write(rows);
    if (repeat >= 0) throw new RepeatedRequest(reqIdAt(rows, repeat), lines?.[repeat] ?? null, batch.file);
    let term = batch.firstTerm;
    for (let i = 0; i < rows.length; i++) {
      term = this.search.writeRow(rowidAt(rows, i), orgIdAt(rows, i), newTerms[i]!, tokens[i]!, term);
    }
    const report = this.progress?.report;
    const every = this.progress?.every ?? 100_000;
    const before = this.written;
    this.written += rows.length;
    for (let mark = before - (before % every) + every; report && mark <= this.written; mark += every) {
      report({ kind: 'written', rows: mark, ms: performance.now() - this.started });
    }
    for (const [keyId, cost] of batch.spend) this.spend.set(keyId, (this.spend.get(keyId) ?? 0) + cost);
    this.search.writeChanges(batch.shares, batch.filled, batch.filledRows);
    // The last batch: every row is written, what was held for the end remains.
    if (batch.last) report?.({ kind: 'committing', rows: this.written });
    if (batch.rollups) this.rollups.write(batch.rollups);
    if (this.sums) this.sumRollups(this.sums, rows, batch.last);
    if (batch.counts) this.search.finish(batch.counts);
  }

  /**
   * Sums the rows' rollup cells, and writes them when enough are held or with the last batch.
   * Here, when the reading thread parses its rows (NDJSON: every line's JSON, its check), which
   * keeps it the busier of the two; else there, where generated rows leave it time to spare.
   * Measured, alternating runs: 500k NDJSON rows into a store of a million ~6 % less time and less
   * CPU here (the cells no longer cross between the threads). Demo traffic summed here was seeded
   * at 60.6k rows a second at 10M rows, 85.2k in the bench run before: its writer is the busier.
   */
  private sumRollups(sums: RollupSums, rows: RequestColumns, last: boolean): void {
    for (let i = 0; i < rows.length; i++) {
      sums.add(recordAt(rows, i, this.record));
      if (sums.full()) this.rollups.write(rollupRows(sums.take()!, this.fineFrom));
    }
    const cells = last ? sums.take() : null;
    if (cells) this.rollups.write(rollupRows(cells, this.fineFrom));
  }

  /** Reads a little of the store that writing will need, while the first batch is on its way; false when nothing is left. */
  readAhead(): boolean {
    return this.search.readAhead();
  }

  /** `records` but those whose request id the store holds already. */
  unstored(records: Iterable<RequestRecord>): RequestRecord[] {
    const stored = this.telemetry
      .prepare<[string | Buffer], number>('SELECT 1 FROM request_rows WHERE req_id = ?')
      .pluck();
    return Array.from(records).filter((record) => stored.get(storedRequestId(record.req_id)) === undefined);
  }

  /** The store as this import found it, for numbering rows and terms on this thread. */
  lookups(): SearchLookups {
    return searchLookups(this.telemetry);
  }

  /**
   * Commits the rows with their spend in the outbox, then settles it, and any a crash left. Once
   * the rows are committed nothing throws: spend that cannot be settled now stays in the outbox.
   */
  async commit(control: ControlStore): Promise<void> {
    const settlement = recordSpend(this.telemetry, this.spend);
    commitImport(this.telemetry, this.transaction);
    await settleCommitted(control, sqliteOutbox(this.telemetry), settlement, this.progress);
  }

  /**
   * How the reading thread sees the store (see `ImportWorkerData`): the path of a store with
   * rows that this import shares, or the lookups read whole when it has the store alone,
   * forgotten here once handed over. Null for an empty store.
   */
  readerStore(): Pick<ImportWorkerData, 'storePath' | 'lookups'> {
    const { empty, lookups } = this.transaction;
    this.transaction = { ...this.transaction, lookups: null };
    return { storePath: empty || lookups ? null : this.telemetryPath, lookups };
  }

  /** Rolls back what is not committed; the connection stays its opener's. */
  end(): void {
    endImport(this.telemetry, this.transaction);
  }
}

/** The batches of `source`, read and prepared by a worker thread, at most a few ahead of the writer. */
async function* readInWorker(
  source: ImportSource,
  store: Omit<ImportWorkerData, 'source' | 'flow'>,
): AsyncGenerator<ImportBatch> {
  const flow = new Int32Array(new SharedArrayBuffer(3 * Int32Array.BYTES_PER_ELEMENT));
  const workerData: ImportWorkerData = { source, ...store, flow };
  const resourceLimits = { maxYoungGenerationSizeMb: READER_YOUNG_GENERATION_MB };
  const worker = startWorker(workerUrl('import-worker', import.meta.url), { workerData, resourceLimits });
  try {
    let received = 0;
    for await (const [message] of on(worker, 'message', { close: ['exit'] }) as AsyncIterable<[ImportMessage]>) {
      if (message.kind === 'failed') throw new ImportSourceError(message.message, message.code);
      if (message.kind === 'done') {
        // A message that could not be read is dropped with a 'messageerror' only.
        if (message.batches !== received) throw new Error('the import reader sent batches that did not arrive');
        return;
      }
      received++;
      yield message.batch;
      Atomics.add(flow, FLOW.written, 1);
      Atomics.notify(flow, FLOW.written);
    }
    throw new Error('the import reader stopped before its last row');
  } finally {
    Atomics.store(flow, FLOW.stop, 1);
    Atomics.notify(flow, FLOW.written);
    await worker.terminate();
  }
}
