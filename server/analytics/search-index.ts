import type { Statement } from 'better-sqlite3';
import { codeOf } from '../stores/telemetry/request-rows.js';
import {
  BLOCK_ROWS,
  CHUNK_TERMS,
  EPOCH_CHUNKS,
  EPOCH_TERMS,
  FillingEpoch,
  mayBeInPacked,
  pieceBuckets,
  ROW_BUCKETS,
  SLICE_BYTES,
  termContains,
  termText,
  termToken,
} from '../stores/telemetry/search-terms.js';

/**
 * The request log's search through its index (stores/telemetry/migrations/003_search.sql):
 * the terms that contain the text are read from the chunks its signatures point to and
 * checked with instr, then the rows are the rows of those terms. Every answer is exact;
 * when the index would be slower than reading the window's rows (a short text, whose
 * pieces point to most terms, over a short window; one that thousands of terms contain),
 * `match` answers null and the caller reads the rows.
 */

/** More matching metadata terms than this make one index query too long. */
const MAX_METADATA_TERMS = 1_000;
/**
 * Terms checked for the cost of reading one row and searching its strings: ~0.16 µs a term
 * (its text and organisation, instr) against ~1.8 µs a row (its id and every metadata key
 * and value folded; ~0.8 µs when an ASCII text is not in the row's stored JSON), measured on
 * a 3M-row store. A text that may be in a term of hex digits costs about twice as much a term:
 * most of those are read from their rows (021_row_terms.sql; at a million demo rows a search
 * for `1ab0` checked its terms in 452 ms, 245 before).
 */
const TERMS_PER_ROW = 11;
const HEX_TERMS_PER_ROW = 6;

export interface SearchMatch {
  /** FTS5 query over `search_rows` for the other rows of the matching shared terms; null when none match. */
  metadata: string | null;
  /** Ids of the matching shared terms. */
  sharedTerms: number[];
  /** Rowids of the matching terms' first rows (each request id's own row among them). */
  firstRows: number[];
}

/**
 * Id ranges of the terms that may contain a text, by the signatures of epochs `0..signed`; every
 * term from `readFrom` on is read (by default, those of the epochs after).
 */
export function candidateRanges(
  pieces: Set<number>,
  signed: number,
  slices: (bucket: number) => { epoch: number; bits: Buffer }[],
  readFrom = (signed + 1) * EPOCH_TERMS,
): [number, number][] {
  const ranges: [number, number][] = [];
  const add = (from: number, to: number) => {
    const last = ranges.at(-1);
    if (last && last[1] + 1 === from) last[1] = to;
    else ranges.push([from, to]);
  };
  if (signed >= 0 && pieces.size === 0) add(0, (signed + 1) * EPOCH_TERMS - 1);
  else if (signed >= 0) {
    // The chunks, epoch by epoch, in which a term holds every piece of the text.
    let chunks: Map<number, Buffer> | null = null;
    for (const bucket of pieces) {
      const next = new Map<number, Buffer>();
      for (const { epoch, bits } of slices(bucket)) {
        const before: Buffer | undefined = chunks ? chunks.get(epoch) : Buffer.from(bits);
        if (!before) continue;
        for (let i = 0; i < before.length; i++) before[i]! &= bits[i]!;
        next.set(epoch, before);
      }
      chunks = next;
      if (chunks.size === 0) break;
    }
    for (const [epoch, bits] of [...(chunks ?? [])].sort((a, b) => a[0] - b[0])) {
      for (let chunk = 0; chunk < EPOCH_CHUNKS; chunk++) {
        if (!(bits[chunk >> 3]! & (1 << (chunk & 7)))) continue;
        const from = epoch * EPOCH_TERMS + chunk * CHUNK_TERMS;
        add(from, from + CHUNK_TERMS - 1);
      }
    }
  }
  // Terms with no signature yet are all read.
  add(readFrom, Number.MAX_SAFE_INTEGER);
  return ranges;
}

type Prepare = (sql: string) => Statement;

/**
 * A range of `search_rows`, bound as integers: FTS5 seeks to a rowid range only when its
 * bounds are integers, and better-sqlite3 binds a JavaScript number as a real. Bound as
 * reals, counting one edge block of a common term decoded its whole list (66 ms, not 0.5).
 */
const ROWIDS = 'rowid BETWEEN CAST(@lo AS INTEGER) AND CAST(@hi AS INTEGER)';

export class SearchIndex {
  /** The signature of the epoch after the last signed, as far as this connection has read its terms. */
  private filling: FillingEpoch | null = null;

  constructor(private readonly prepare: Prepare) {}

  /**
   * The terms of an organisation that contain `text` (already casefolded); null to read the
   * `windowRows` rows of the search's window instead, when that costs less.
   */
  match(orgId: string, text: string, windowRows: number): SearchMatch | null {
    const signed = (this.prepare('SELECT MAX(epoch) FROM search_epochs').pluck().get() as number | null) ?? -1;
    const lastTerm = (this.prepare('SELECT MAX(id) FROM search_terms').pluck().get() as number | null) ?? -1;
    const filling = this.fillingEpoch(signed, lastTerm);
    const ranges = filling
      ? candidateRanges(
          pieceBuckets(text),
          filling.epoch,
          (bucket) => [...this.slices(bucket, signed), { epoch: filling.epoch, bits: filling.slice(bucket) }],
          filling.upTo + 1,
        )
      : candidateRanges(pieceBuckets(text), signed, (bucket) => this.slices(bucket, signed));
    const candidates = ranges.reduce((sum, [from, to]) => sum + Math.max(0, Math.min(to, lastTerm) - from + 1), 0);
    const packed = mayBeInPacked(text);
    if (candidates > windowRows * (packed ? HEX_TERMS_PER_ROW : TERMS_PER_ROW)) return null;
    const terms = this.prepare(
      `SELECT id, row, shared FROM search_terms
      WHERE id BETWEEN @from AND @to AND org_code = ${codeOf('@orgId')}
        AND ${termContains('text', 'row', '@text', '@packed')}`,
    );
    const sharedTerms: number[] = [];
    const firstRows: number[] = [];
    for (const [from, to] of ranges) {
      for (const term of terms.iterate({
        from,
        to,
        orgId,
        text,
        packed: Number(packed),
      }) as IterableIterator<{
        id: number;
        row: number;
        shared: 0 | 1;
      }>) {
        firstRows.push(term.row);
        if (term.shared) sharedTerms.push(term.id);
        // Rows found as their terms' first are read by rowid: more of them than the window
        // holds are cheaper to find by reading the window.
        if (sharedTerms.length > MAX_METADATA_TERMS || firstRows.length > windowRows) return null;
      }
    }
    const metadata = sharedTerms.length > 0 ? sharedTerms.map(termToken).join(' OR ') : null;
    return { metadata, sharedTerms, firstRows };
  }

  /**
   * The signature of the epoch after `signed`, its bits set for its terms up to `lastTerm` (those
   * not read before, by this connection); null when more than one epoch is unsigned (a store just
   * migrated: the writer signs them when it next opens it).
   */
  private fillingEpoch(signed: number, lastTerm: number): FillingEpoch | null {
    const epoch = signed + 1;
    if (lastTerm >= (epoch + 1) * EPOCH_TERMS) return null;
    // Another epoch signed, or another store under this connection's path: begun again.
    if (this.filling?.epoch !== epoch || this.filling.upTo > lastTerm) this.filling = new FillingEpoch(epoch);
    const filling = this.filling;
    if (lastTerm > filling.upTo) {
      const terms = this.prepare(
        `SELECT id, ${termText('text', 'row')} AS text FROM search_terms WHERE id > @from AND id <= @to`,
      );
      for (const term of terms.iterate({ from: filling.upTo, to: lastTerm }) as IterableIterator<{
        id: number;
        text: string | null;
      }>) {
        // No text: its row is deleted (retention), and no search may find it.
        if (term.text !== null) filling.add(term.id, term.text);
      }
      filling.upTo = lastTerm;
    }
    return filling;
  }

  /** A bucket's signature in each signed epoch. */
  slices(bucket: number, signed: number): { epoch: number; bits: Buffer }[] {
    // One range of the table (keyed by page, then epoch).
    return this.prepare(
      `SELECT epoch, substr(bits, @offset, @length) AS bits FROM search_signatures
      WHERE page = @page AND epoch <= @signed`,
    ).all({
      signed,
      page: Math.floor(bucket / ROW_BUCKETS),
      offset: (bucket % ROW_BUCKETS) * SLICE_BYTES + 1,
      length: SLICE_BYTES,
    }) as { epoch: number; bits: Buffer }[];
  }

  /**
   * Rows of the organisation in [from, to] that hold a matching shared term other than as
   * its first row: whole blocks of rowids inside the window are counted from the index alone
   * (from the per-block counts when one term matches: a row holds it once), rows of edge
   * blocks by their time.
   */
  countShared(match: SearchMatch, orgId: string, from: number, to: number): number {
    const { metadata, sharedTerms } = match;
    const blocks = this.prepare(
      'SELECT block, min_ts AS min, max_ts AS max FROM search_blocks ORDER BY block',
    ).all() as {
      block: number;
      min: number;
      max: number;
    }[];
    const inside =
      sharedTerms.length === 1
        ? this.prepare(
            `SELECT COALESCE(SUM(rows), 0) AS n FROM search_term_blocks
            WHERE term = @term AND block BETWEEN @firstBlock AND @lastBlock`,
          )
        : this.prepare(`SELECT COUNT(*) AS n FROM search_rows WHERE search_rows MATCH @metadata AND ${ROWIDS}`);
    const edge = this.prepare(
      `SELECT COUNT(*) AS n FROM ${FROM_MATCHES} WHERE rowid IN (
        SELECT rowid FROM search_rows WHERE search_rows MATCH @metadata AND ${ROWIDS})
      AND org_code = ${codeOf('@orgId')} AND ts >= @from AND ts <= @to`,
    );
    let total = 0;
    let run: { lo: number; hi: number } | null = null;
    const countRun = () => {
      if (!run) return;
      const blocks = { firstBlock: run.lo / BLOCK_ROWS, lastBlock: (run.hi + 1) / BLOCK_ROWS - 1 };
      total += (inside.get({ metadata, term: sharedTerms[0], ...run, ...blocks }) as { n: number }).n;
      run = null;
    };
    for (const { block, min, max } of blocks) {
      const lo = block * BLOCK_ROWS;
      const hi = lo + BLOCK_ROWS - 1;
      if (min >= from && max <= to) {
        if (run) run.hi = hi;
        else run = { lo, hi };
        continue;
      }
      countRun();
      if (max >= from && min <= to) total += (edge.get({ metadata, lo, hi, orgId, from, to }) as { n: number }).n;
    }
    countRun();
    return total;
  }
}

/**
 * The requests table for queries that start from the index's rows: left to itself SQLite
 * prefers the (org_id, ts) index and reads the whole window, probing each row.
 */
export const FROM_MATCHES = 'requests_unindexed AS requests';

/** SQL true for a row that is a matching term's first row (the row is `requests`). */
export const BY_FIRST_ROW = 'requests.rowid IN (SELECT value FROM json_each(@firstRows))';

/** SQL true for a row that holds a matching shared term other than as its first row. */
export const BY_SHARED_TERM = 'requests.rowid IN (SELECT rowid FROM search_rows WHERE search_rows MATCH @metadata)';

/** The same, for one row at a time. */
export const HOLDS_SHARED_TERM =
  'EXISTS (SELECT 1 FROM search_rows WHERE search_rows MATCH @metadata AND rowid = requests.rowid)';

/** SQL true for a row the match finds. */
export function matchSql(match: SearchMatch): string {
  if (match.metadata === null) return BY_FIRST_ROW;
  return match.firstRows.length === 0 ? BY_SHARED_TERM : `(${BY_SHARED_TERM} OR ${BY_FIRST_ROW})`;
}

/** The match's parameters for `matchSql`. */
export function matchParams(match: SearchMatch): Record<string, unknown> {
  return {
    firstRows: JSON.stringify(match.firstRows),
    ...(match.metadata === null ? {} : { metadata: match.metadata }),
  };
}
