import type { Database, Statement } from 'better-sqlite3';
import { metadataHexDigits } from './request-metadata.js';
import type { RequestRecord } from './request-record.js';
import { isCompactRequestId } from './request-rows.js';

/**
 * What the search index's writer, its migration and its reader must agree on
 * (migrations/003_search.sql).
 */

/** Request rowids per block of `search_blocks`: 2^16 (`rowid >> 16` in SQL). */
export const BLOCK_ROWS = 65_536;

/** Terms per chunk, chunks per epoch (one bit each in a signature), and signature buckets. */
export const CHUNK_TERMS = 256;
export const EPOCH_CHUNKS = 256;
export const EPOCH_TERMS = CHUNK_TERMS * EPOCH_CHUNKS;
/**
 * Rows per chunk of the rows' own signatures (024_row_signatures.sql): a row has about two own
 * texts (its request id, a trace id), so a chunk holds about twice the pieces of one of terms. That
 * halves the signatures' bytes (9 a row at ten million demo rows, 18 with chunks of 128: 025), for
 * more chunks holding a short text's few pieces by chance: a search of six digits reads more rows.
 */
export const CHUNK_ROWS = 256;
export const EPOCH_ROWS = CHUNK_ROWS * EPOCH_CHUNKS;
const BUCKETS = 16_384;
/** Bytes of one bucket's signature in an epoch: a bit per chunk. */
export const SLICE_BYTES = EPOCH_CHUNKS / 8;
/**
 * Buckets whose signatures share a row of `search_signatures` (migrations/005): fewer rows
 * to write, each small enough to stay on its B-tree page.
 */
export const ROW_BUCKETS = 16;
/** Length of the pieces the signatures hold: a shorter text cannot use them. */
const PIECE = 4;

/**
 * A term's text of lowercase hex digits, an even number of them, alone or after `req_` (the
 * gateway's request ids, trace ids), is stored as a blob of their bytes after a byte that says
 * which (017_compact_request_ids.sql): half the bytes. A search makes the text again (`termText`)
 * only where it could be in it (`termContains`). Any other text is stored as it is.
 */
const PACKED = /^(req_)?((?:[0-9a-f]{2})+)$/;
const PLAIN_HEX = 0;
const REQUEST_ID = 1;

/** The value `search_terms.text` holds for a term's text. */
export function storedTermText(text: string): string | Buffer {
  const packed = PACKED.exec(text);
  if (!packed) return text;
  const hex = packed[2]!;
  const stored = Buffer.allocUnsafe(1 + hex.length / 2);
  stored[0] = packed[1] ? REQUEST_ID : PLAIN_HEX;
  stored.write(hex, 1, 'hex');
  return stored;
}

/**
 * SQL for the text of a term whose stored value (`storedTermText`) is `stored` and first row `row`,
 * columns of `search_terms`. A store made before migration 024 may hold a term that is the kind
 * byte alone (021: its first row's own request id or trace id, read from the row): null when that
 * row is gone.
 */
export const termText = (stored: string, row: string): string => `CASE WHEN typeof(${stored}) = 'blob'
  THEN CASE WHEN length(${stored}) = 1
    THEN (SELECT CASE WHEN ${stored} = x'0${REQUEST_ID}' THEN 'req_' || lower(hex(own.req_id)) ELSE lower(hex(own.metadata_hex)) END
      FROM request_rows AS own WHERE own.id = ${row})
    ELSE CASE WHEN substr(${stored}, 1, 1) = x'0${REQUEST_ID}' THEN 'req_' ELSE '' END || lower(hex(substr(${stored}, 2))) END
  ELSE ${stored} END`;

/**
 * Whether a search text may be in a packed term's text: hex digits, after a part of `req_` (a
 * loose test: it only spares the unpacking of terms a text cannot be in).
 */
export const mayBeInPacked = (text: string): boolean => /^r?e?q?_?[0-9a-f]*$/.test(text);

/**
 * SQL true when the term whose stored value is `stored` contains parameter `text`; parameter
 * `packed` is `mayBeInPacked(text)`: when false, packed terms are passed over without being made
 * again (most searches are words, most terms ids and trace ids).
 */
export const termContains = (stored: string, row: string, text: string, packed: string): string =>
  `CASE WHEN typeof(${stored}) = 'text' THEN instr(${stored}, ${text}) > 0
    WHEN ${packed} THEN COALESCE(instr(${termText(stored, row)}, ${text}) > 0, 0) ELSE 0 END`;

/**
 * Makes `search_rows` again without its table of document sizes (018's step, new stores only):
 * FTS5 keeps one row of sizes for each indexed row, ~9 bytes of ten million rows' 450 and an
 * insert each, for ranking, which the search never does. An existing store keeps its sizes:
 * its contentless index could be made again only from every row's shared terms, which it does
 * not keep.
 */
export function searchRowsWithoutSizes(db: Database): void {
  db.exec(`DROP TABLE search_rows;
    CREATE VIRTUAL TABLE search_rows USING fts5(terms, content = '', detail = 'none', columnsize = 0, tokenize = 'ascii')`);
}

/** The token of a metadata term in `search_rows`. */
export const termToken = (id: number): string => `t${id}`;

/** Casefolding as JavaScript does it: SQLite's lower() folds ASCII only. */
export const casefold = (text: string): string => text.toLowerCase();

/** The search texts of a row, casefolded: its request id, then its metadata's keys and string values, each once. */
export function searchTexts(
  row: Pick<RequestRecord, 'req_id' | 'metadata'>,
  parsed?: Readonly<Record<string, unknown>>,
): string[] {
  const texts = [casefold(row.req_id)];
  if (row.metadata === '{}') return texts;
  const metadata = parsed ?? (JSON.parse(row.metadata) as Record<string, unknown>);
  // A row holds a handful of strings: a scan of the list is cheaper than a Set. The request
  // id is a term of its own: a metadata string equal to it is still a metadata term.
  for (const key in metadata) {
    const text = casefold(key);
    if (!texts.includes(text, 1)) texts.push(text);
    const value = metadata[key];
    if (typeof value !== 'string') continue;
    const folded = casefold(value);
    if (!texts.includes(folded, 1)) texts.push(folded);
  }
  return texts;
}

/**
 * A row's own search texts: its request id when stored as bytes, and the hex digits its metadata
 * sets aside (request-metadata.ts, whether its writer stored them aside or not). Most texts are
 * these, held by one row each: they are found through the row (`ROW_SIGNATURES`, `ownTextsHold`),
 * never as terms, which took ~30 bytes a row (024_row_signatures.sql).
 */
export function ownTexts(row: Pick<RequestRecord, 'req_id' | 'metadata'>): string[] {
  const own: string[] = [];
  if (isCompactRequestId(row.req_id)) own.push(row.req_id);
  const hex = metadataHexDigits(row.metadata);
  if (hex !== null) own.push(hex);
  return own;
}

/** SQL for a row's own texts (`ownTexts`), columns of `request_rows` as `alias`: null or '' for none. */
const ownTextsSql = (alias: string): [string, string] => [
  `CASE WHEN typeof(${alias}.req_id) = 'blob' THEN 'req_' || lower(hex(${alias}.req_id)) END`,
  `lower(hex(COALESCE(${alias}.metadata_hex,
    CASE WHEN typeof(${alias}.metadata) = 'text' THEN metadata_hex(${alias}.metadata) END)))`,
];

/** SQL true for a row (`request_rows` as `alias`) one of whose own texts holds parameter `text`. */
export const ownTextsHold = (alias: string, text: string): string =>
  ownTextsSql(alias)
    .map((own) => `instr(${own}, ${text}) > 0`)
    .join(' OR ');

/** The bucket of the piece of `text` at `at`. */
function pieceBucket(text: string, at: number): number {
  let h = 0x2545f491;
  for (let j = at; j < at + PIECE; j++) h = Math.imul(h ^ text.charCodeAt(j), 0x9e3779b1);
  return (h ^ (h >>> 17)) & (BUCKETS - 1);
}

/** The buckets of a text's pieces of four UTF-16 code units, each once. */
export function pieceBuckets(text: string): Set<number> {
  const buckets = new Set<number>();
  for (let at = 0; at + PIECE <= text.length; at++) buckets.add(pieceBucket(text, at));
  return buckets;
}

/**
 * One kind of signatures: of terms, numbered by id (003_search.sql), or of rows' own texts, by
 * rowid (024_row_signatures.sql). Each epoch of `EPOCH_CHUNKS` chunks of `chunk` ids gets one.
 */
export interface Signatures {
  chunk: number;
  /** Ids per epoch. */
  epoch: number;
  table: string;
  /** The signed epochs. */
  epochs: string;
  /** SQL for the largest id. */
  last: string;
  /** SQL for the ids from @from to before @to, each with up to two texts (`a`, `b`): null where gone. */
  texts: string;
}

export const TERM_SIGNATURES: Signatures = {
  chunk: CHUNK_TERMS,
  epoch: EPOCH_TERMS,
  table: 'search_signatures',
  epochs: 'search_epochs',
  last: 'SELECT MAX(id) FROM search_terms',
  texts: `SELECT id, ${termText('text', 'row')} AS a, NULL AS b FROM search_terms WHERE id >= @from AND id < @to`,
};

const [OWN_A, OWN_B] = ownTextsSql('r');
export const ROW_SIGNATURES: Signatures = {
  chunk: CHUNK_ROWS,
  epoch: EPOCH_ROWS,
  table: 'search_row_signatures',
  epochs: 'search_row_epochs',
  last: 'SELECT MAX(id) FROM request_rows',
  texts: `SELECT id, ${OWN_A} AS a, ${OWN_B} AS b FROM request_rows AS r WHERE id >= @from AND id < @to`,
};

/**
 * Writes the signatures of every complete epoch of terms and of rows not yet signed, in a
 * transaction of its own or as part of the caller's. Called by the writer before it commits, and
 * when a store is opened for writing (terms and rows a migration left unsigned). An epoch fills
 * every 65,536 terms or rows, so its cost is spread over many rows.
 */
export function signEpochs(db: Database): void {
  for (const kind of [TERM_SIGNATURES, ROW_SIGNATURES]) {
    const unsigned = (): { from: number; to: number } | null => {
      const last = (db.prepare(kind.last).pluck().get() as number | null) ?? 0;
      const signed = (db.prepare(`SELECT MAX(epoch) FROM ${kind.epochs}`).pluck().get() as number | null) ?? -1;
      const complete = Math.floor((last + 1) / kind.epoch) - 1;
      return complete > signed ? { from: signed + 1, to: complete } : null;
    };
    if (!unsigned()) continue;
    db.transaction(() => {
      const epochs = unsigned();
      if (epochs) for (let epoch = epochs.from; epoch <= epochs.to; epoch++) signEpoch(db, kind, epoch);
    }).immediate();
  }
}

/** A signature with no bit set: a bit per chunk for each bucket. */
const emptySignature = () => Buffer.alloc(BUCKETS * SLICE_BYTES);

/** Sets the bits of `text`'s pieces for id `id` in the signature of its epoch, whose first id is `first`. */
function addToSignature(bits: Buffer, kind: Signatures, first: number, id: number, text: string): void {
  const chunk = Math.floor((id - first) / kind.chunk);
  const byte = chunk >> 3;
  const bit = 1 << (chunk & 7);
  for (let at = 0; at + PIECE <= text.length; at++) bits[pieceBucket(text, at) * SLICE_BYTES + byte]! |= bit;
}

/** Prepares a statement: a connection's own, or a reader's cache of them. */
export type Prepare = (sql: string) => Statement;

/** Sets the bits of each text a `texts` query (`Signatures.texts`) reads from the store. */
function addStored(
  prepare: Prepare,
  kind: Signatures,
  range: { from: number; to: number },
  add: (id: number, text: string) => void,
): void {
  const texts = prepare(kind.texts).raw();
  for (const [id, a, b] of texts.iterate(range) as IterableIterator<[number, string | null, string | null]>) {
    // No text: a term whose row retention deleted, which no search may find.
    if (a) add(id, a);
    if (b) add(id, b);
  }
}

/**
 * Writes the signature of `epoch`. `held`: the bits of its ids from `from` on, set as they were
 * written; only the ids before `from` are read back from the store.
 */
function signEpoch(db: Database, kind: Signatures, epoch: number, held?: { bits: Buffer; from: number }): void {
  const first = epoch * kind.epoch;
  const bits = held?.bits ?? emptySignature();
  const readTo = held?.from ?? first + kind.epoch;
  if (readTo > first) {
    addStored(
      (sql) => db.prepare(sql),
      kind,
      { from: first, to: readTo },
      (id, text) => addToSignature(bits, kind, first, id, text),
    );
  }
  const insert = db.prepare(`INSERT INTO ${kind.table} (page, epoch, bits) VALUES (?, ?, ?)`);
  const rowBytes = ROW_BUCKETS * SLICE_BYTES;
  for (let page = 0; page < BUCKETS / ROW_BUCKETS; page++) {
    insert.run(page, epoch, bits.subarray(page * rowBytes, (page + 1) * rowBytes));
  }
  db.prepare(`INSERT INTO ${kind.epochs} (epoch) VALUES (?)`).run(epoch);
}

/**
 * The signature of the epoch being filled, which the writer signs only once it is full: built by a
 * reader from the epoch's ids as they are written (search-index.ts), so that a search reads there
 * too only the chunks its pieces point to, rather than up to a whole epoch of terms or rows.
 */
export class FillingEpoch {
  private readonly bits = emptySignature();
  /** The last id whose bits are set (or skipped: a term or row deleted has none). */
  upTo: number;

  constructor(
    private readonly kind: Signatures,
    readonly epoch: number,
  ) {
    this.upTo = epoch * kind.epoch - 1;
  }

  /** Sets the bits of the ids after `upTo` up to `last`, read from the store. */
  read(prepare: Prepare, last: number): void {
    if (last <= this.upTo) return;
    const first = this.epoch * this.kind.epoch;
    addStored(prepare, this.kind, { from: this.upTo + 1, to: last + 1 }, (id, text) =>
      addToSignature(this.bits, this.kind, first, id, text),
    );
    this.upTo = last;
  }

  /** A bucket's bits: one per chunk of the epoch. */
  slice(bucket: number): Buffer {
    return this.bits.subarray(bucket * SLICE_BYTES, (bucket + 1) * SLICE_BYTES);
  }
}

/** An epoch whose last id was just planned: the bits of its ids from `from` on. */
export interface FilledEpoch {
  epoch: number;
  from: number;
  bits: Uint8Array;
}

/**
 * The signature bits of each epoch, set as an import plans its terms or rows (in id order, with
 * no gap: it numbers them itself): reading ten million terms back at the end cost an import
 * ~1 µs a term. Pure, so it runs on the import's preparing thread; `signFilled` writes.
 */
export class EpochBits {
  private epoch = -1;
  private from = -1;
  private readonly bits = emptySignature();

  constructor(private readonly kind: Signatures) {}

  /** Id `id` is planned with `texts`; the epoch's bits when `id` is its last. */
  add(id: number, texts: readonly string[]): FilledEpoch | null {
    const epoch = Math.floor(id / this.kind.epoch);
    if (epoch !== this.epoch) {
      this.epoch = epoch;
      this.from = id;
      this.bits.fill(0);
    }
    for (const text of texts) addToSignature(this.bits, this.kind, epoch * this.kind.epoch, id, text);
    if ((id + 1) % this.kind.epoch !== 0) return null;
    return { epoch, from: this.from, bits: Uint8Array.from(this.bits) };
  }
}

/**
 * The bits of the ids a store holds of the epoch its next id falls in, read a few at a time by an
 * import under its write lock while it has nothing else to do (its reading thread starting), so
 * that signing the epoch once the import's own ids fill it (`signFilled`) reads back only the rest.
 */
export class StoredEpoch {
  readonly epoch: number;
  readonly bits = emptySignature();
  /** The next id to read, and the store's next id: every id before it is read when they meet. */
  private read: number;
  readonly to: number;

  constructor(
    private readonly db: Database,
    private readonly kind: Signatures,
  ) {
    this.to = ((db.prepare(kind.last).pluck().get() as number | null) ?? -1) + 1;
    this.epoch = Math.floor(this.to / kind.epoch);
    this.read = this.epoch * kind.epoch;
  }

  /** Reads up to `ids` more ids; false once every one is read. */
  readSome(ids = Infinity): boolean {
    const to = Math.min(this.to, this.read + ids);
    if (this.read < to) {
      const first = this.epoch * this.kind.epoch;
      const add = (id: number, text: string) => addToSignature(this.bits, this.kind, first, id, text);
      addStored((sql) => this.db.prepare(sql), this.kind, { from: this.read, to }, add);
      this.read = to;
    }
    return this.read < this.to;
  }
}

/**
 * Writes the signature of an epoch an import filled, inside its transaction, once its terms or
 * rows are written. Readers take every epoch up to the newest signed one as signed: an earlier
 * one left unsigned (a migration's) is signed first, from the store. `stored`: what the store
 * held of the epoch before the import, as far as read; else that is read back now.
 */
export function signFilled(db: Database, kind: Signatures, filled: FilledEpoch, stored?: StoredEpoch): void {
  const signed = db.prepare(`SELECT MAX(epoch) FROM ${kind.epochs}`).pluck().get() as number | null;
  if ((signed ?? -1) !== filled.epoch - 1) return signEpochs(db);
  const bits = Buffer.from(filled.bits.buffer, filled.bits.byteOffset, filled.bits.length);
  if (stored?.epoch === filled.epoch && stored.to === filled.from) {
    stored.readSome();
    for (let i = 0; i < bits.length; i++) bits[i]! |= stored.bits[i]!;
    signEpoch(db, kind, filled.epoch, { bits, from: filled.epoch * kind.epoch });
  } else signEpoch(db, kind, filled.epoch, { bits, from: filled.from });
}

/** The function the search index's SQL uses: on every connection that reads or migrates it. */
export function registerSearchFunctions(db: Database): void {
  db.function('casefold', { deterministic: true }, (text: unknown) =>
    typeof text === 'string' ? casefold(text) : text,
  );
}
