import type { Database, Statement } from 'better-sqlite3';
import { BLOCK_ROWS, EpochSigner, signEpochs, termToken } from './search-terms.js';

/** Metadata terms remembered between rows; past this, all are forgotten (shared ones are found again). */
const MAX_CACHED_TERMS = 100_000;
/** Shared terms read into memory at a writer's first row, when there are no more than this. */
const MAX_PRELOADED_SHARED = 100_000;

const cacheKey = (orgId: string, text: string) => `${orgId}\u0000${text}`;

interface Term {
  id: number;
  shared: boolean;
}

/**
 * Keeps the search index (migrations/003_search.sql) in step with the rows being written,
 * inside the writer's transaction. A writer lives for one transaction: its cache of terms
 * dies with a rolled-back batch.
 */
export class SearchWriter {
  private readonly insertTerm: Statement;
  private readonly findCommon: Statement<[string, string], number>;
  private readonly share: Statement;
  private readonly insertCommon: Statement;
  private readonly insertRow: Statement;
  private readonly upsertBlock: Statement;
  private readonly upsertTermBlock: Statement;
  /** This writer's metadata terms by organisation and text. */
  private readonly terms = new Map<string, Term>();
  /**
   * Every shared term, by organisation and text, when they were few enough to read at the
   * first row (the writer then holds the write lock, so only it adds more); null to ask the
   * store each time.
   */
  private shared: Map<string, number> | null | undefined;
  /** Per block: the smallest and largest time written in it by this writer. */
  private readonly blocks = new Map<number, [number, number]>();
  /** Per shared term, per block: the rows written with it. */
  private readonly termBlocks = new Map<number, Map<number, number>>();
  private readonly signer: EpochSigner;

  /** `preloadShared`: at most this many shared terms are read into memory (tests set 0 to take the other path). */
  constructor(
    private readonly db: Database,
    private readonly preloadShared = MAX_PRELOADED_SHARED,
  ) {
    this.insertTerm = db.prepare('INSERT INTO search_terms (org_id, text, row, shared) VALUES (?, ?, ?, ?)');
    this.findCommon = db
      .prepare<[string, string], number>('SELECT term FROM search_common WHERE org_id = ? AND text = ?')
      .pluck();
    this.share = db.prepare('UPDATE search_terms SET shared = 1 WHERE id = ?');
    this.insertCommon = db.prepare('INSERT OR IGNORE INTO search_common (org_id, text, term) VALUES (?, ?, ?)');
    this.insertRow = db.prepare('INSERT INTO search_rows (rowid, terms) VALUES (?, ?)');
    this.upsertBlock = db.prepare(`INSERT INTO search_blocks (block, min_ts, max_ts) VALUES (?, ?, ?)
      ON CONFLICT (block) DO UPDATE SET min_ts = min(min_ts, excluded.min_ts), max_ts = max(max_ts, excluded.max_ts)`);
    this.upsertTermBlock = db.prepare(`INSERT INTO search_term_blocks (term, block, rows) VALUES (?, ?, ?)
      ON CONFLICT (term, block) DO UPDATE SET rows = rows + excluded.rows`);
    this.signer = new EpochSigner(db);
  }

  /**
   * Indexes a row just inserted as `rowid`, from its search texts (`searchTexts` in
   * domain/import-batches.ts): the request id first, then its metadata's strings.
   */
  add(rowid: number, orgId: string, ts: number, texts: readonly string[]): void {
    this.newTerm(orgId, texts[0]!, rowid);
    const block = Math.floor(rowid / BLOCK_ROWS);
    const tokens: string[] = [];
    for (let i = 1; i < texts.length; i++) {
      const shared = this.metadataTerm(orgId, texts[i]!, rowid);
      if (shared === null) continue;
      tokens.push(termToken(shared));
      let counts = this.termBlocks.get(shared);
      if (!counts) this.termBlocks.set(shared, (counts = new Map()));
      counts.set(block, (counts.get(block) ?? 0) + 1);
    }
    if (tokens.length > 0) this.insertRow.run(rowid, tokens.join(' '));
    const span = this.blocks.get(block);
    if (!span) this.blocks.set(block, [ts, ts]);
    else {
      span[0] = Math.min(span[0], ts);
      span[1] = Math.max(span[1], ts);
    }
  }

  /** Writes the blocks' spans and counts, and signs any filled epoch the signer left; call before the transaction commits. */
  flush(): void {
    for (const [block, [min, max]] of this.blocks) this.upsertBlock.run(block, min, max);
    this.blocks.clear();
    for (const [term, counts] of this.termBlocks) {
      for (const [block, rows] of counts) this.upsertTermBlock.run(term, block, rows);
    }
    this.termBlocks.clear();
    signEpochs(this.db);
  }

  /**
   * The term of a metadata string in row `rowid`: its id when the row holds it as a shared
   * term, null when the row is the term's first (new terms are found through their row).
   */
  private metadataTerm(orgId: string, text: string, rowid: number): number | null {
    const key = cacheKey(orgId, text);
    const cached = this.terms.get(key);
    if (cached) {
      if (!cached.shared) {
        this.share.run(cached.id);
        this.insertCommon.run(orgId, text, cached.id);
        this.shared?.set(key, cached.id);
        cached.shared = true;
      }
      return cached.id;
    }
    const shared = this.sharedTerms();
    const common = shared ? shared.get(key) : this.findCommon.get(orgId, text);
    const term =
      common === undefined ? { id: this.newTerm(orgId, text, rowid), shared: false } : { id: common, shared: true };
    if (this.terms.size >= MAX_CACHED_TERMS) this.terms.clear();
    this.terms.set(key, term);
    return term.shared ? term.id : null;
  }

  private newTerm(orgId: string, text: string, rowid: number): number {
    const id = Number(this.insertTerm.run(orgId, text, rowid, 0).lastInsertRowid);
    this.signer.add(id, text);
    return id;
  }

  private sharedTerms(): Map<string, number> | null {
    if (this.shared !== undefined) return this.shared;
    this.shared = null;
    const count = this.db.prepare('SELECT COUNT(*) FROM search_common').pluck().get() as number;
    if (count > this.preloadShared) return null;
    const rows = this.db.prepare('SELECT org_id, text, term FROM search_common').raw().all() as [
      string,
      string,
      number,
    ][];
    this.shared = new Map(rows.map(([orgId, text, term]) => [cacheKey(orgId, text), term]));
    return this.shared;
  }
}
