import { codeOf } from '../stores/telemetry/request-rows.js';
import {
  BLOCK_ROWS,
  EPOCH_CHUNKS,
  FillingEpoch,
  mayBeInPacked,
  ownTextsHold,
  pieceBuckets,
  ROW_BUCKETS,
  ROW_SIGNATURES,
  SLICE_BYTES,
  TERM_SIGNATURES,
  termContains,
  termToken,
  type Prepare,
  type Signatures,
} from '../stores/telemetry/search-terms.js';

/**
 * The request log's search through its index (stores/telemetry/migrations/003_search.sql, 024):
 * the terms that contain the text are read from the chunks its signatures point to and checked
 * with instr, and so are the rows' own texts (request ids, trace ids) from the chunks of rows the
 * rows' signatures point to; the rows are those rows and the rows of those terms. Every answer is
 * exact; when the index would be slower than reading the window's rows (a short text, whose pieces
 * point to most chunks, over a short window; one that thousands of terms contain), `match`
 * answers null and the caller reads the rows.
 */

/** More matching metadata terms than this make one index query too long. */
const MAX_METADATA_TERMS = 1_000;
/**
 * Terms checked for the cost of reading one row and searching its strings: ~0.16 µs a term
 * (its text and organisation, instr) against ~1.8 µs a row (its id and every metadata key
 * and value folded; ~0.8 µs when an ASCII text is not in the row's stored JSON), measured on
 * a 3M-row store.
 */
const TERMS_PER_ROW = 11;
/**
 * Rows whose own texts are checked (by rowid, in order: ~0.35 µs a row, measured at a million demo
 * rows) for the cost of searching one row of the window.
 */
const OWN_ROWS_PER_ROW = 4;

export interface SearchMatch {
  /** FTS5 query over `search_rows` for the other rows of the matching shared terms; null when none match. */
  metadata: string | null;
  /** Ids of the matching shared terms. */
  sharedTerms: number[];
  /** Rowids of the matching terms' first rows and of the rows whose own texts match. */
  firstRows: number[];
}

/**
 * Id ranges of the terms or rows (`kind`) that may contain a text, by the signatures of epochs
 * `0..signed`; every id from `readFrom` on is read (by default, those of the epochs after).
 */
export function candidateRanges(
  pieces: Set<number>,
  signed: number,
  slices: (bucket: number) => { epoch: number; bits: Buffer }[],
  readFrom = (signed + 1) * TERM_SIGNATURES.epoch,
  kind: Signatures = TERM_SIGNATURES,
): [number, number][] {
  const ranges: [number, number][] = [];
  const add = (from: number, to: number) => {
    const last = ranges.at(-1);
    if (last && last[1] + 1 === from) last[1] = to;
    else ranges.push([from, to]);
  };
  if (signed >= 0 && pieces.size === 0) add(0, (signed + 1) * kind.epoch - 1);
  else if (signed >= 0) {
    // The chunks, epoch by epoch, in which a term or row holds every piece of the text.
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
        const from = epoch * kind.epoch + chunk * kind.chunk;
        add(from, from + kind.chunk - 1);
      }
    }
  }
  // Ids with no signature yet are all read.
  add(readFrom, Number.MAX_SAFE_INTEGER);
  return ranges;
}

/** The parts of sorted ranges `a` inside sorted ranges `b`. */
function intersect(a: [number, number][], b: [number, number][]): [number, number][] {
  const out: [number, number][] = [];
  let j = 0;
  for (const [from, to] of a) {
    while (j < b.length && b[j]![1] < from) j++;
    for (let k = j; k < b.length && b[k]![0] <= to; k++) {
      out.push([Math.max(from, b[k]![0]), Math.min(to, b[k]![1])]);
    }
  }
  return out;
}

/**
 * Pieces looked up in the signatures: past a dozen, a chunk that holds them all but not the text is
 * rare, and each costs a read of its bucket in every epoch (a whole request id has 33).
 */
const MAX_PIECES = 12;

/** At most `MAX_PIECES` of a text's pieces, spread along it: any of them narrow the chunks to a superset of the answer's. */
function fewest(pieces: Set<number>): Set<number> {
  if (pieces.size <= MAX_PIECES) return pieces;
  const all = [...pieces];
  return new Set(Array.from({ length: MAX_PIECES }, (_, i) => all[Math.floor((i * all.length) / MAX_PIECES)]!));
}

/** Candidate ids of one kind, and how many of them there are (up to the last id). */
interface Candidates {
  ranges: [number, number][];
  count: number;
}

/**
 * A range of `search_rows`, bound as integers: FTS5 seeks to a rowid range only when its
 * bounds are integers, and better-sqlite3 binds a JavaScript number as a real. Bound as
 * reals, counting one edge block of a common term decoded its whole list (66 ms, not 0.5).
 */
const ROWIDS = 'rowid BETWEEN CAST(@lo AS INTEGER) AND CAST(@hi AS INTEGER)';

export class SearchIndex {
  /** The signature of the epoch after the last signed, of each kind, as far as this connection has read its ids. */
  private readonly filling = new Map<Signatures, FillingEpoch>();

  constructor(private readonly prepare: Prepare) {}

  /**
   * The terms and rows of an organisation that contain `text` (already casefolded); null to read
   * the `windowRows` rows of the search's window (from `from` to `to`) instead, when that costs less.
   */
  match(orgId: string, text: string, windowRows: number, window?: { from: number; to: number }): SearchMatch | null {
    const pieces = fewest(pieceBuckets(text));
    const terms = this.candidates(TERM_SIGNATURES, pieces);
    // A row's own texts are a request id and hex digits: only a text that may be in one is looked for there.
    const rows = mayBeInPacked(text) ? this.candidates(ROW_SIGNATURES, pieces, window) : null;
    if (terms.count / TERMS_PER_ROW + (rows?.count ?? 0) / OWN_ROWS_PER_ROW > windowRows) return null;
    const termsHolding = this.prepare(
      `SELECT id, row, shared FROM search_terms
      WHERE id BETWEEN @from AND @to AND org_code = ${codeOf('@orgId')}
        AND ${termContains('text', 'row', '@text', '@packed')}`,
    );
    const sharedTerms: number[] = [];
    const firstRows: number[] = [];
    const params = { orgId, text, packed: Number(mayBeInPacked(text)) };
    for (const [from, to] of terms.ranges) {
      for (const term of termsHolding.iterate({ ...params, from, to }) as IterableIterator<{
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
    // By rowid alone (`+`): left to itself SQLite may read the organisation's index for each range.
    const rowsHolding = this.prepare(
      `SELECT id FROM request_rows AS r
      WHERE id BETWEEN @from AND @to AND +org_code = ${codeOf('@orgId')} AND (${ownTextsHold('r', '@text')})`,
    ).pluck();
    for (const [from, to] of rows?.ranges ?? []) {
      for (const row of rowsHolding.iterate({ orgId, text, from, to }) as IterableIterator<number>) {
        firstRows.push(row);
        if (firstRows.length > windowRows) return null;
      }
    }
    const metadata = sharedTerms.length > 0 ? sharedTerms.map(termToken).join(' OR ') : null;
    return { metadata, sharedTerms, firstRows };
  }

  /** The ids of `kind` that may hold the pieces; of rows, only those of blocks that reach into `window`. */
  private candidates(kind: Signatures, pieces: Set<number>, window?: { from: number; to: number }): Candidates {
    const signed = (this.prepare(`SELECT MAX(epoch) FROM ${kind.epochs}`).pluck().get() as number | null) ?? -1;
    const last = (this.prepare(kind.last).pluck().get() as number | null) ?? -1;
    const filling = this.fillingEpoch(kind, signed, last);
    let ranges = filling
      ? candidateRanges(
          pieces,
          filling.epoch,
          (bucket) => [...this.slices(bucket, signed, kind), { epoch: filling.epoch, bits: filling.slice(bucket) }],
          filling.upTo + 1,
          kind,
        )
      : candidateRanges(pieces, signed, (bucket) => this.slices(bucket, signed, kind), undefined, kind);
    if (window) ranges = intersect(ranges, this.blocksIn(window));
    const count = ranges.reduce((sum, [from, to]) => sum + Math.max(0, Math.min(to, last) - from + 1), 0);
    return { ranges, count };
  }

  /** Rowid ranges of the blocks holding a row of the window's time (search_blocks: every row's block). */
  private blocksIn(window: { from: number; to: number }): [number, number][] {
    const blocks = this.prepare(
      'SELECT block FROM search_blocks WHERE max_ts >= @from AND min_ts <= @to ORDER BY block',
    ).pluck();
    const ranges: [number, number][] = [];
    for (const block of blocks.iterate(window) as IterableIterator<number>) {
      const from = block * BLOCK_ROWS;
      const last = ranges.at(-1);
      if (last && last[1] + 1 === from) last[1] = from + BLOCK_ROWS - 1;
      else ranges.push([from, from + BLOCK_ROWS - 1]);
    }
    return ranges;
  }

  /**
   * The signature of `kind`'s epoch after `signed`, its bits set for its ids up to `last` (those
   * not read before, by this connection); null when more than one epoch is unsigned (a store just
   * migrated: the writer signs them when it next opens it).
   */
  private fillingEpoch(kind: Signatures, signed: number, last: number): FillingEpoch | null {
    const epoch = signed + 1;
    if (last >= (epoch + 1) * kind.epoch) return null;
    let filling = this.filling.get(kind);
    // Another epoch signed, or another store under this connection's path: begun again.
    if (filling?.epoch !== epoch || filling.upTo > last)
      this.filling.set(kind, (filling = new FillingEpoch(kind, epoch)));
    filling.read(this.prepare, last);
    return filling;
  }

  /** A bucket's signature in each signed epoch of `kind`. */
  slices(bucket: number, signed: number, kind: Signatures = TERM_SIGNATURES): { epoch: number; bits: Buffer }[] {
    // One range of the table (keyed by page, then epoch).
    return this.prepare(
      `SELECT epoch, substr(bits, @offset, @length) AS bits FROM ${kind.table}
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
