import type pg from 'pg';
import { REQUEST_COLUMNS } from '../request-record.js';
import { ROLLUP_TABLES, type RollupRow, type RollupRows } from '../rollup-writer.js';
import {
  columnsOf,
  insertFromArrays,
  insertRequests,
  recordSpend,
  rollBack,
  ROLLUP_TYPES,
  ROWS_PER_STATEMENT,
  storableColumns,
  storableText,
  upsertCells,
} from './request-sql.js';
import { copyRequests, copyRows } from './copy-rows.js';
import { buildIndexes, HeldCells, keyStoredOtherwise, storableCells, takeEmptyRequests } from './empty-store.js';
import { dayOf, dayTables, type RequestDays } from './request-days.js';
import { addHoursSql, mergeHoursSql, SearchHours, stageHoursSql, type SearchTerms } from './search-columns.js';

/** Search set rows by hour held in memory at most, before they are staged. */
const HELD_HOURS = 50_000;

const SEARCH_TABLES = ['search_common', 'search_sets', 'search_hours'];

/** Cells of one rollup table (its index in `ROLLUP_TABLES`), summed already: copied from another store. */
export interface CellPart {
  table: number;
  rows: RollupRow[];
}

/** Cells copied from another store did not add up as they do there: nothing was committed. */
export class UnequalCopy extends Error {}

/** A table's cells as they are staged, then added up into the table (`merge`). */
const stage = (table: string) => `stage_${table}`;

/**
 * The staged cells of `table` summed by key, added to the table in key order: measures added,
 * sketches merged, the later time kept.
 */
function mergeSql(index: number): string {
  const table = ROLLUP_TABLES[index]!;
  const key = table.columns.slice(0, table.keyColumns);
  const summed = [
    ...key,
    ...table.sums.map((m) => `SUM(${m})`),
    ...table.sketches.map((m) => `sketch_sum(${m})`),
    ...table.latest.map((m) => `MAX(${m})`),
  ];
  const set = [
    ...table.sums.map((m) => `${m} = t.${m} + excluded.${m}`),
    ...table.sketches.map((m) => `${m} = sketch_merge(t.${m}, excluded.${m})`),
    ...table.latest.map((m) => `${m} = GREATEST(t.${m}, excluded.${m})`),
  ];
  const columns = [...key, ...table.sums, ...table.sketches, ...table.latest];
  return `INSERT INTO ${table.name} AS t (${columns.join(', ')})
    SELECT ${summed.join(', ')} FROM ${stage(table.name)} GROUP BY ${key.join(', ')} ORDER BY ${key.join(', ')}
    ON CONFLICT (${key.join(', ')}) DO UPDATE SET ${set.join(', ')}`;
}

/**
 * An import into the request log on PostgreSQL: one transaction for all its rows, so that a
 * source failing part-way writes nothing. Its cells arrive in parts (the reading thread sends
 * them as it holds enough) and the same cell may be in several: they are staged in temporary
 * tables and added to the rollups once, at the commit, each table in key order. So the import
 * holds no cell's lock until its last statements, and takes them in the order every writer
 * takes them: a long import never deadlocks with the gateways' writes beside it.
 *
 * Into an empty request log, the import takes `requests` to itself and writes otherwise: its rows
 * by COPY (copy-rows.ts), its indexes built after them, its cells straight into the rollups
 * (empty-store.ts).
 */
export class PgImport {
  private done = false;
  /** Rows of search sets by hour, held until enough to stage. */
  private readonly hours = new SearchHours();
  /** Every insert sent, settled or not. */
  private inFlight: Promise<unknown> = Promise.resolve();
  /** The statements on the transaction sent last (`serially`). */
  private queue: Promise<unknown> = Promise.resolve();
  /** The last batch's search columns, being made. */
  private searching: Promise<unknown> = Promise.resolve();
  /** Into an empty request log: the cells summed across parts. */
  private readonly held = new HeldCells();
  /** Rollup tables whose copied cells go by upsert (`addCells`), and those found empty. */
  private readonly upserted = new Set<number>();
  private readonly empty = new Set<number>();
  /** Into an empty request log: its day tables' names by day. */
  private readonly tables = new Map<number, string>();

  private constructor(
    private readonly client: pg.PoolClient,
    /** For numbering search terms outside the transaction (`SearchTerms`). */
    private readonly numbering: pg.PoolClient,
    private readonly terms: SearchTerms,
    private readonly days: RequestDays,
    private readonly committed: () => void,
    /** The indexes of `requests` to build at the commit, when it was empty: null when it is shared. */
    private readonly dropped: string[] | null,
  ) {}

  /** The request log was empty: the import holds it alone, and builds its indexes after the rows. */
  get intoEmpty(): boolean {
    return this.dropped !== null;
  }

  /**
   * `pool`: the import takes two connections of its own: one for its transaction, one for
   * numbering search terms outside it. Held, not taken when needed: into an empty log, writes
   * beside the import wait for it holding the pool's other connections.
   */
  static async begin(pool: pg.Pool, terms: SearchTerms, days: RequestDays, committed: () => void): Promise<PgImport> {
    const client = await pool.connect();
    let numbering: pg.PoolClient;
    try {
      numbering = await pool.connect();
    } catch (error) {
      client.release();
      throw error;
    }
    try {
      // The numbers are committed without waiting for the disk: a crash can lose only numbers no
      // committed row names, since the WAL is flushed in order and every transaction that names
      // one (this import's, a gateway's that found it) flushes past it at its own commit. Waiting
      // cost the copy of a million rows ~4 s, its batches waiting for their numbers.
      await numbering.query('SET synchronous_commit = off');
      await client.query('BEGIN');
      // Flushed at its commit whatever the server's default: VACUUM marks a page all-visible only
      // once the commit of its rows is on disk.
      await client.query('SET LOCAL synchronous_commit = on');
      const dropped = await takeEmptyRequests(client);
      if (dropped === null) {
        for (const table of [...ROLLUP_TABLES.map((rollup) => rollup.name), 'search_hours']) {
          await client.query(
            `CREATE TEMPORARY TABLE ${stage(table)} (LIKE ${table} INCLUDING DEFAULTS) ON COMMIT DROP`,
          );
        }
      }
      return new PgImport(client, numbering, terms, days, committed, dropped);
    } catch (error) {
      await rollBack(client);
      client.release(error as Error);
      numbering.release(true);
      throw error;
    }
  }

  /**
   * Inserts rows given by column (`REQUEST_COLUMNS` order); returns the ids inserted (not stored
   * before). A batch may be sent before the last one's answer: they are written in order. Into
   * an empty log (`intoEmpty`), `copyLines` must give each row's columns as a COPY line too.
   */
  insert(values: unknown[][], copyLines: readonly string[] | null): Promise<Set<string>> {
    const inserting = this.insertNow(values, copyLines);
    // `close` waits for it: a statement sent after the rollback would run outside the import.
    this.inFlight = Promise.allSettled([this.inFlight, inserting]);
    return inserting;
  }

  private async insertNow(values: unknown[][], copyLines: readonly string[] | null): Promise<Set<string>> {
    if (this.intoEmpty && copyLines === null) throw new Error('an import into an empty log copies its rows as lines');
    const column = (name: (typeof REQUEST_COLUMNS)[number]) => values[REQUEST_COLUMNS.indexOf(name)]!;
    const [orgIds, reqIds, times] = [
      column('org_id') as string[],
      column('req_id') as string[],
      column('ts') as number[],
    ];
    // One batch's terms at a time: the caller may send the next batch before this one is written.
    const searching = this.searching.then(() =>
      this.terms.columns(orgIds, reqIds, column('metadata') as string[], (text, values) =>
        this.numbering.query(text, values),
      ),
    );
    this.searching = searching.catch(() => undefined);
    const search = await searching;
    return this.serially(async () => {
      if (this.done) throw new Error('the import has ended');
      await this.days.ensure(this.client, times, { inTransaction: true });
      const inserted = this.intoEmpty
        ? await copyRequests(
            this.client,
            { ids: reqIds, times, lines: copyLines! },
            search,
            await this.dayTables(times),
          )
        : await insertRequests(this.client, values, search);
      // A COPY that stopped at a repeated id aborted the transaction: nothing more is to be sent.
      if (this.intoEmpty && inserted.size < reqIds.length) return inserted;
      reqIds.forEach((id, i) => {
        if (inserted.has(storableText(id))) this.hours.add(storableText(orgIds[i]!), search.sets[i]!, times[i]!);
      });
      if (this.hours.size >= HELD_HOURS && !this.done) await this.stageHours();
      return inserted;
    });
  }

  /**
   * Runs `work`'s statements on the transaction once every earlier one's have run. A batch's
   * statements interleaved with the next one's would run inside the savepoint that makes its day
   * tables (request-days.ts): its rows rolled back with the savepoint when another session made
   * the table first, and a COPY FREEZE refused.
   */
  private serially<T>(work: () => Promise<T>): Promise<T> {
    const running = this.queue.then(work);
    this.queue = running.catch(() => undefined);
    return running;
  }

  /** The day tables of `times`, by day, read again when one is not known here. */
  private async dayTables(times: readonly number[]): Promise<(day: number) => string> {
    if (times.some((ts) => !this.tables.has(dayOf(ts)))) {
      for (const table of await dayTables(this.client)) this.tables.set(dayOf(table.from), table.name);
    }
    return (day) => {
      const table = this.tables.get(day);
      if (table === undefined) throw new Error(`no day table of requests holds day ${day}`);
      return table;
    };
  }

  private async stageHours(): Promise<void> {
    const text = this.intoEmpty ? addHoursSql() : stageHoursSql(stage('search_hours'));
    await this.client.query({ text, values: this.hours.take() });
  }

  /** Stages a part's cells, after the statements of the rows sent before it. */
  stage(rows: RollupRows): Promise<void> {
    return this.serially(() => this.stageNow(rows));
  }

  private async stageNow(rows: RollupRows): Promise<void> {
    if (this.intoEmpty) {
      await upsertCells(this.client, this.held.add(storableCells(rows)));
      return;
    }
    for (const [index, table] of ROLLUP_TABLES.entries()) {
      const types = table.columns.map((column) => ROLLUP_TYPES[column] ?? 'int8');
      const cells = rows[index]!;
      for (let at = 0; at < cells.length; at += ROWS_PER_STATEMENT) {
        const chunk = cells.slice(at, at + ROWS_PER_STATEMENT);
        // Not a named statement: each import's staging tables are new ones.
        await this.client.query({
          text: insertFromArrays(stage(table.name), table.columns, types),
          values: storableColumns(columnsOf(chunk, table.columns.length, (row, c) => row[c])),
        });
      }
    }
  }

  /**
   * Adds cells copied from another store, where they were summed from the same rows. Into an empty
   * log, by COPY into a table found empty; else as an upsert adds them: to a table that holds
   * cells, or once a part holds a text PostgreSQL stores otherwise (U+0000, two cells there may be
   * one), and from then on for that table (a COPY would fail on a cell the upsert made).
   */
  async addCells({ table, rows }: CellPart): Promise<void> {
    const { name, columns, keyColumns } = ROLLUP_TABLES[table]!;
    const alone = ROLLUP_TABLES.map((_, index) => (index === table ? rows : []));
    if (!this.intoEmpty) return this.stage(alone);
    if (!this.upserted.has(table) && !this.empty.has(table)) {
      const found = await this.client.query<{ empty: boolean }>(`SELECT NOT EXISTS (SELECT 1 FROM ${name}) AS empty`);
      if (found.rows[0]!.empty) this.empty.add(table);
      else this.upserted.add(table);
    }
    if (rows.some((row) => keyStoredOtherwise(row, keyColumns))) this.upserted.add(table);
    if (this.upserted.has(table)) await upsertCells(this.client, storableCells(alone));
    else
      await copyRows(
        this.client,
        name,
        columns,
        columnsOf(rows, columns.length, (row, c) => row[c]),
        rows.length,
      );
  }

  /**
   * Adds the staged cells to the rollups and `spend` to the outbox, and commits; returns the
   * settlement id. `cellSums`, when given, is what each rollup table's first measure must add up
   * to once the cells are written (`ROLLUP_TABLES` order): a copy's check, else nothing commits.
   */
  async commit(spend: ReadonlyMap<string, number>, cellSums?: readonly bigint[]): Promise<string | null> {
    if (this.hours.size > 0) await this.stageHours();
    if (this.dropped) {
      await upsertCells(this.client, this.held.take());
    } else {
      for (const index of ROLLUP_TABLES.keys()) await this.client.query(mergeSql(index));
      await this.client.query(mergeHoursSql(stage('search_hours')));
    }
    if (cellSums) await this.checkCellSums(cellSums);
    // After the check: a copy that fails it does not wait for them.
    if (this.dropped) await buildIndexes(this.client, this.dropped);
    const settlement = await recordSpend(this.client, spend);
    await this.client.query('COMMIT');
    this.done = true;
    this.committed();
    // Statistics for the rows just added, so that the next queries are planned for them rather
    // than for the store before the import; and their pages marked all-visible, so that counts
    // read the indexes alone (without it, right after a copy of ten million rows, a month's log by
    // minimum cost fetched each of its 100,000 rows from the table: 475 ms). Autovacuum does both,
    // minutes later at that size. VACUUM skips pages marked already: an import pays for its own.
    // The rows are committed: a failure here changes nothing but the plans until then.
    // Rows copied into an empty log are frozen and marked all-visible already (copy-rows.ts):
    // ANALYZE counts the marks too, and a VACUUM would only read every page of their indexes
    // besides (GIN's cleanup reads its index whole: a copy of a million rows, 8.5 s against 6.6).
    // The other tables skipped when locked: autovacuum, which an import's rows wake, is at them,
    // and waiting for it cost a copy of a million rows ~3 s.
    await this.client.query(this.dropped ? 'ANALYZE requests' : 'VACUUM (ANALYZE) requests').catch(() => undefined);
    await this.client
      .query(
        `VACUUM (ANALYZE, SKIP_LOCKED) ${[...ROLLUP_TABLES.map((table) => table.name), ...SEARCH_TABLES].join(', ')}`,
      )
      .catch(() => undefined);
    return settlement;
  }

  private async checkCellSums(expected: readonly bigint[]): Promise<void> {
    const sums = ROLLUP_TABLES.map(
      (table, index) => `(SELECT COALESCE(SUM(${table.sums[0]}), 0) FROM ${table.name})::text AS "${index}"`,
    );
    const found = (await this.client.query<Record<string, string>>(`SELECT ${sums.join(', ')}`)).rows[0]!;
    for (const [index, table] of ROLLUP_TABLES.entries()) {
      if (BigInt(found[index]!) !== expected[index]) {
        throw new UnequalCopy(
          `the copied ${table.name} adds up to ${found[index]} ${table.sums[0]}, the source's to ${expected[index]}`,
        );
      }
    }
  }

  /** Rolls back what is not committed, and gives the connections back. */
  async close(): Promise<void> {
    if (this.done) {
      this.client.release();
      // Not given back to the pool with its setting (`begin`): a new connection is cheap.
      this.numbering.release(true);
      return;
    }
    this.done = true;
    await this.inFlight;
    this.client.release(await rollBack(this.client));
    // The day tables it made went with it.
    this.days.forget();
    // A numbering statement may have failed with its connection: a new one is cheap.
    this.numbering.release(true);
  }
}
