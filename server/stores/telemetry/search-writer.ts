import type { Database, Statement } from 'better-sqlite3';
import { BufferedInsert } from './buffered-insert.js';
import type { RequestStrings } from './request-rows.js';
import type { BlockCounts, Share } from './search-planner.js';
import {
  ROW_SIGNATURES,
  signEpochs,
  signFilled,
  storedTermText,
  TERM_SIGNATURES,
  StoredEpoch,
  type FilledEpoch,
} from './search-terms.js';

/** Ids read ahead at a time: a few milliseconds, so that the first rows to write wait no longer. */
const READ_AHEAD_IDS = 1_024;

/**
 * Writes the search index's entries (migrations/003_search.sql) that a `SearchPlanner`
 * planned, inside the import's transaction, under the row and term numbers it gave.
 */
export class SearchWriter {
  private readonly insertTerm: BufferedInsert;
  private readonly share: Statement;
  private readonly insertCommon: Statement;
  private readonly insertRow: Statement;
  private readonly upsertBlock: Statement;
  private readonly upsertTermBlock: Statement;
  /** What the store holds of the epochs its next term and row fall in, once read ahead (`readAhead`). */
  private stored: { terms: StoredEpoch; rows: StoredEpoch } | null = null;

  /** `strings`: the codes of the import's strings, shared with its rows' writer (the organisation's). */
  constructor(
    private readonly db: Database,
    private readonly strings: RequestStrings,
  ) {
    this.insertTerm = new BufferedInsert(db, 'search_terms (id, org_code, text, row)', 4);
    // A shared term keeps its text: its first row may go (retention) while others hold it.
    this.share = db.prepare('UPDATE search_terms SET shared = 1, text = ? WHERE id = ?');
    this.insertCommon = db.prepare('INSERT OR IGNORE INTO search_common (org_id, text, term) VALUES (?, ?, ?)');
    // One row to a statement: SQLite keeps a statement journal for an INSERT of several rows
    // into a virtual table, and opening it makes FTS5 write out the terms it holds each time.
    this.insertRow = db.prepare('INSERT INTO search_rows (rowid, terms) VALUES (?, ?)');
    this.upsertBlock = db.prepare(`INSERT INTO search_blocks (block, min_ts, max_ts) VALUES (?, ?, ?)
      ON CONFLICT (block) DO UPDATE SET min_ts = min(min_ts, excluded.min_ts), max_ts = max(max_ts, excluded.max_ts)`);
    this.upsertTermBlock = db.prepare(`INSERT INTO search_term_blocks (term, block, rows) VALUES (?, ?, ?)
      ON CONFLICT (term, block) DO UPDATE SET rows = rows + excluded.rows`);
  }

  /**
   * Writes row `rowid`'s planned entries (`PlannedRow`), its new terms numbered from `firstTerm`;
   * returns the next term's id.
   */
  writeRow(
    rowid: number,
    orgId: string,
    newTerms: readonly string[],
    tokens: string | null,
    firstTerm: number,
  ): number {
    let term = firstTerm;
    if (newTerms.length > 0) {
      const orgCode = this.strings.codeOf(orgId);
      for (const text of newTerms) this.insertTerm.add([term++, orgCode, storedTermText(text), rowid]);
    }
    if (tokens !== null) this.insertRow.run(rowid, tokens);
    return term;
  }

  /**
   * Writes the rows' entries still held, then makes terms shared and epochs of terms and rows
   * filled, which needs the rows they were planned in written first.
   */
  writeChanges(shares: readonly Share[], filled: readonly FilledEpoch[], filledRows: readonly FilledEpoch[]): void {
    this.insertTerm.flush();
    for (const [term, orgId, text] of shares) {
      this.share.run(storedTermText(text), term);
      this.insertCommon.run(orgId, text, term);
    }
    for (const epoch of filled) signFilled(this.db, TERM_SIGNATURES, epoch, this.stored?.terms);
    for (const epoch of filledRows) signFilled(this.db, ROW_SIGNATURES, epoch, this.stored?.rows);
  }

  /**
   * Reads ahead a little of what the store holds of the epochs the import's first terms and rows
   * fill, which `writeChanges` signs once they are full (up to 65,536 rows read back: ~0.5 s of
   * the writing thread at ten million rows, every import); false once all is read. Called while
   * the writer waits for its first rows, under the write lock.
   */
  readAhead(): boolean {
    this.stored ??= {
      terms: new StoredEpoch(this.db, TERM_SIGNATURES),
      rows: new StoredEpoch(this.db, ROW_SIGNATURES),
    };
    return this.stored.terms.readSome(READ_AHEAD_IDS) || this.stored.rows.readSome(READ_AHEAD_IDS);
  }

  /** Writes the blocks' spans and counts, and signs any complete epoch left unsigned; call before the transaction commits. */
  finish(counts: BlockCounts): void {
    this.insertTerm.flush();
    for (const [block, [min, max]] of counts.blocks) this.upsertBlock.run(block, min, max);
    for (const [term, rows] of counts.termBlocks) {
      for (const [block, n] of rows) this.upsertTermBlock.run(term, block, n);
    }
    signEpochs(this.db);
  }
}
