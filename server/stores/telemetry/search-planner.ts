import type { Database, Statement } from 'better-sqlite3';
import { BLOCK_ROWS, EpochBits, ROW_SIGNATURES, TERM_SIGNATURES, termToken, type FilledEpoch } from './search-terms.js';

/**
 * Plans the search index's entries (migrations/003_search.sql) for rows being imported:
 * which of a row's strings are new terms, which are shared ones (and become its tokens in
 * `search_rows`), the blocks' spans and counts, and the signatures of filled epochs of terms
 * and of the rows' own texts (024_row_signatures.sql). It
 * numbers the rows and terms itself, from the store's last ones, so that it can run on the
 * import's preparing thread with a read-only connection (or the store's lookups read whole,
 * `StoredLookups`), while the writer holds the write lock; the writer (search-writer.ts)
 * writes rows and terms under those numbers.
 */

/** Metadata terms remembered between rows; past this, all are forgotten (shared ones are found again). */
const MAX_CACHED_TERMS = 100_000;
/** Shared terms read into memory at the first row, when there are no more than this. */
const MAX_PRELOADED_SHARED = 100_000;

/** Values by organisation, then text: no key to build for each lookup. */
class ByOrg<T> {
  private readonly orgs = new Map<string, Map<string, T>>();
  size = 0;

  get(orgId: string, text: string): T | undefined {
    return this.orgs.get(orgId)?.get(text);
  }

  set(orgId: string, text: string, value: T): void {
    let texts = this.orgs.get(orgId);
    if (!texts) this.orgs.set(orgId, (texts = new Map()));
    if (!texts.has(text)) this.size++;
    texts.set(text, value);
  }

  clear(): void {
    this.orgs.clear();
    this.size = 0;
  }
}

interface Term {
  id: number;
  shared: boolean;
}

/** What the planner reads from the store, as it stood when the import took the write lock. */
export interface SearchLookups {
  /** The last request rowid and term id in the store (0 when none). */
  lastRowid: number;
  lastTerm: number;
  countShared(): number;
  allShared(): [orgId: string, text: string, term: number][];
  findShared(orgId: string, text: string): number | undefined;
}

/** The lookups of a store read whole, as plain data: its last numbers and every shared term. */
export interface StoredLookups {
  lastRowid: number;
  lastTerm: number;
  shared: [orgId: string, text: string, term: number][];
}

/** Lookups answered from `StoredLookups`, with no connection to the store. */
export function lookupsFrom({ lastRowid, lastTerm, shared }: StoredLookups): SearchLookups {
  let byText: ByOrg<number> | undefined;
  return {
    lastRowid,
    lastTerm,
    countShared: () => shared.length,
    allShared: () => shared,
    findShared: (orgId, text) => {
      if (!byText) {
        byText = new ByOrg();
        for (const [org, sharedText, term] of shared) byText.set(org, sharedText, term);
      }
      return byText.get(orgId, text);
    },
  };
}

/** A store without rows: nothing to look up. */
export const NO_ROWS: SearchLookups = lookupsFrom({ lastRowid: 0, lastTerm: 0, shared: [] });

/** Whether the store's shared terms are few enough that a planner reads them all at its first row. */
export function fewSharedTerms(db: Database): boolean {
  // Counted no further than the limit: the table may hold millions.
  const sql = 'SELECT COUNT(*) FROM (SELECT 1 FROM search_common LIMIT ?)';
  const count = db
    .prepare<[number], number>(sql)
    .pluck()
    .get(MAX_PRELOADED_SHARED + 1)!;
  return count <= MAX_PRELOADED_SHARED;
}

/** The store's lookups read whole (see `fewSharedTerms`: at most as many shared terms as a planner preloads). */
export function storedLookups(db: Database): StoredLookups {
  const lookups = searchLookups(db);
  return { lastRowid: lookups.lastRowid, lastTerm: lookups.lastTerm, shared: lookups.allShared() };
}

export function searchLookups(db: Database): SearchLookups {
  const findCommon: Statement<[string, string], number> = db
    .prepare<[string, string], number>('SELECT term FROM search_common WHERE org_id = ? AND text = ?')
    .pluck();
  const max = (sql: string) => (db.prepare(sql).pluck().get() as number | null) ?? 0;
  return {
    lastRowid: max('SELECT MAX(id) FROM request_rows'),
    lastTerm: max('SELECT MAX(id) FROM search_terms'),
    countShared: () => max('SELECT COUNT(*) FROM search_common'),
    allShared: () =>
      db.prepare('SELECT org_id, text, term FROM search_common').raw().all() as [string, string, number][],
    findShared: (orgId, text) => findCommon.get(orgId, text),
  };
}

/** A term first seen earlier in the import, seen again: it becomes shared. */
export type Share = [term: number, orgId: string, text: string];

/** Per block, the smallest and largest time; per shared term, per block, its rows. */
export interface BlockCounts {
  blocks: Map<number, [number, number]>;
  termBlocks: Map<number, Map<number, number>>;
}

/** What the writer does for one planned row. */
export interface PlannedRow {
  /** The texts of the row's new terms, numbered on from the last (not its own texts: `ownTexts`). */
  newTerms: string[];
  /** Its shared terms' tokens for `search_rows`, or null for none. */
  tokens: string | null;
}

export class SearchPlanner {
  private nextRowid: number;
  private nextTerm: number;
  /** Metadata terms of this import by organisation and text. */
  private readonly terms = new ByOrg<Term>();
  /** Every shared term by organisation and text, when few enough to read at the first row; null to ask the store. */
  private shared: ByOrg<number> | null | undefined;
  /** Terms this import made shared, when the store is asked for the others (it cannot see them). */
  private readonly sharedHere = new ByOrg<number>();
  private counts: BlockCounts = { blocks: new Map(), termBlocks: new Map() };
  private readonly termBits = new EpochBits(TERM_SIGNATURES);
  private readonly rowBits = new EpochBits(ROW_SIGNATURES);
  /** Made since last taken. */
  private shares: Share[] = [];
  private filled: FilledEpoch[] = [];
  private filledRows: FilledEpoch[] = [];
  private readonly preloadShared: number;
  private readonly cachedTerms: number;

  /**
   * `preloadShared`: at most this many shared terms are read into memory; `cachedTerms`: at
   * most this many metadata terms are remembered (tests set them low to take the other paths).
   */
  constructor(
    private readonly lookups: SearchLookups,
    { preloadShared = MAX_PRELOADED_SHARED, cachedTerms = MAX_CACHED_TERMS } = {},
  ) {
    this.preloadShared = preloadShared;
    this.cachedTerms = cachedTerms;
    this.nextRowid = lookups.lastRowid + 1;
    this.nextTerm = lookups.lastTerm + 1;
  }

  /** The rowid the next row will be written as. */
  get rowid(): number {
    return this.nextRowid;
  }

  /** The id the next new term will be written as. */
  get term(): number {
    return this.nextTerm;
  }

  /**
   * Plans the next row from its search texts (`searchTexts`: its request id, then its metadata's
   * strings) and its own (`ownTexts`), which are no terms.
   */
  plan(orgId: string, ts: number, texts: readonly string[], own: readonly string[]): PlannedRow {
    const rowid = this.nextRowid++;
    const filledRows = this.rowBits.add(rowid, own);
    if (filledRows) this.filledRows.push(filledRows);
    const newTerms: string[] = [];
    // A request id of another form is a term of its row alone.
    if (!own.includes(texts[0]!)) {
      newTerms.push(texts[0]!);
      this.newTerm(texts[0]!);
    }
    const block = Math.floor(rowid / BLOCK_ROWS);
    const tokens: string[] = [];
    for (let i = 1; i < texts.length; i++) {
      const text = texts[i]!;
      if (own.includes(text)) continue;
      const shared = this.metadataTerm(orgId, text);
      if (shared === null) {
        newTerms.push(text);
        continue;
      }
      tokens.push(termToken(shared));
      let counts = this.counts.termBlocks.get(shared);
      if (!counts) this.counts.termBlocks.set(shared, (counts = new Map()));
      counts.set(block, (counts.get(block) ?? 0) + 1);
    }
    const span = this.counts.blocks.get(block);
    if (!span) this.counts.blocks.set(block, [ts, ts]);
    else {
      span[0] = Math.min(span[0], ts);
      span[1] = Math.max(span[1], ts);
    }
    return { newTerms, tokens: tokens.length > 0 ? tokens.join(' ') : null };
  }

  /** Terms become shared and epochs of terms and of rows filled since the last call. */
  takeChanges(): { shares: Share[]; filled: FilledEpoch[]; filledRows: FilledEpoch[] } {
    const changes = { shares: this.shares, filled: this.filled, filledRows: this.filledRows };
    this.shares = [];
    this.filled = [];
    this.filledRows = [];
    return changes;
  }

  /** The blocks' spans and counts so far, forgotten here. */
  takeCounts(): BlockCounts {
    const counts = this.counts;
    this.counts = { blocks: new Map(), termBlocks: new Map() };
    return counts;
  }

  /**
   * The id of a metadata string when the row holds it as a shared term; null when the row
   * is the term's first (a new term, found through its row).
   */
  private metadataTerm(orgId: string, text: string): number | null {
    const cached = this.terms.get(orgId, text);
    if (cached) {
      if (!cached.shared) {
        this.shares.push([cached.id, orgId, text]);
        (this.shared ?? this.sharedHere).set(orgId, text, cached.id);
        cached.shared = true;
      }
      return cached.id;
    }
    const shared = this.sharedTerms();
    const common = shared
      ? shared.get(orgId, text)
      : (this.sharedHere.get(orgId, text) ?? this.lookups.findShared(orgId, text));
    const term = common === undefined ? { id: this.newTerm(text), shared: false } : { id: common, shared: true };
    if (this.terms.size >= this.cachedTerms) this.terms.clear();
    this.terms.set(orgId, text, term);
    return term.shared ? term.id : null;
  }

  private newTerm(text: string): number {
    const id = this.nextTerm++;
    const filled = this.termBits.add(id, [text]);
    if (filled) this.filled.push(filled);
    return id;
  }

  private sharedTerms(): ByOrg<number> | null {
    if (this.shared !== undefined) return this.shared;
    this.shared = null;
    if (this.lookups.countShared() > this.preloadShared) return null;
    const shared = new ByOrg<number>();
    for (const [orgId, text, term] of this.lookups.allShared()) shared.set(orgId, text, term);
    return (this.shared = shared);
  }
}
