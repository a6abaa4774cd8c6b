import { copyValue } from '../stores/telemetry/postgres/copy-rows.js';
import { REQUEST_COLUMNS, requestValues, type RequestRecord } from '../stores/telemetry/request-record.js';
import { shapeOf } from '../stores/telemetry/request-metadata.js';

/**
 * An import batch's request rows by column, as the reading thread passes them to the
 * writer (import-batches.ts). A thread boundary copies a value at a time out of arrays of
 * rows and makes each again on the other side; here numbers travel as blocks of memory and
 * a string repeated across rows (organisation, key, model, user agent) once per batch.
 * Measured against rows as arrays: a batch's deserialising and reading back on the writer
 * ~2.3 → ~0.9 µs a row; 500k demo rows, three alternating pairs, the writing thread
 * 1-2.7 µs a row less and the whole import ~7 % less CPU.
 */
export interface RequestColumns {
  /** Rows in the batch: the arrays may be longer. */
  length: number;
  /** Number columns, NaN for null (SQLite stores a NaN bound to it as NULL anyway). */
  numbers: Float64Array[];
  /** Columns of strings mostly seen once: the request id, the attempts (or null), the metadata. */
  texts: (string | null)[][];
  /** The other string columns: each row's index into its column's list of values. */
  codes: Uint16Array[];
  dictionaries: (string | null)[][];
  /** The rows' metadata by its shape, for SQLite's store; null for PostgreSQL's, which keeps the text. */
  shapes: MetadataShapes | null;
}

/**
 * Each row's metadata shape and the bytes it sets aside (request-metadata.ts, `shapeOf`), made by
 * the reading thread: on the writer's, a row's regular expression, string building, lookup of
 * a new string and hex decoding took ~1.4 µs of its ~15.
 */
export interface MetadataShapes {
  /** Each row's index into `values`: its metadata's shape, or null where it has none (kept whole). */
  codes: Uint16Array;
  values: (string | null)[];
  /** The bytes each row's shape set aside, one row's after the other's: row r's end at `ends[r]`. */
  bytes: Uint8Array;
  ends: Uint32Array;
}

/** The bytes row `row`'s shape set aside, or null for none. */
export function hexAt(shapes: MetadataShapes, row: number): Uint8Array | null {
  const start = row === 0 ? 0 : shapes.ends[row - 1]!;
  const end = shapes.ends[row]!;
  return end > start ? shapes.bytes.subarray(start, end) : null;
}

/** The columns written: `REQUEST_COLUMNS`, then the rowid the import gave the row. */
export const INSERT_COLUMNS = [...REQUEST_COLUMNS, 'rowid'] as const;

const NUMBER = 0;
const TEXT = 1;
const CODED = 2;
type Kind = typeof NUMBER | typeof TEXT | typeof CODED;

export type InsertColumn = (typeof INSERT_COLUMNS)[number];
type StringColumn = {
  [C in InsertColumn]: C extends keyof RequestRecord ? (RequestRecord[C] extends number | null ? never : C) : never;
}[InsertColumn];

/**
 * How each column travels. Typed so that a new column must be given its way and a string
 * column cannot travel as a number (it would arrive as NaN and be stored as NULL).
 */
const KIND: { [C in InsertColumn]: C extends StringColumn ? typeof TEXT | typeof CODED : typeof NUMBER } = {
  req_id: TEXT,
  ts: NUMBER,
  org_id: CODED,
  project_id: CODED,
  key_id: CODED,
  model: CODED,
  status: NUMBER,
  stream: NUMBER,
  total_ms: NUMBER,
  ttft_ms: NUMBER,
  tpot_ms: NUMBER,
  pre_dispatch_ms: NUMBER,
  prompt_tokens: NUMBER,
  tokens_generated: NUMBER,
  cache_creation_input_tokens: NUMBER,
  cache_read_input_tokens: NUMBER,
  total_tokens: NUMBER,
  tokens_estimated: NUMBER,
  cost_micro: NUMBER,
  is_byok: NUMBER,
  termination_reason: CODED,
  upstream_error: CODED,
  upstream_model: CODED,
  served_by: CODED,
  attempts: TEXT,
  api: CODED,
  user_agent: CODED,
  metadata: TEXT,
  rowid: NUMBER,
};

const KINDS: Kind[] = INSERT_COLUMNS.map((c) => KIND[c]);
/** Each column's index among the columns of its kind. */
const SLOTS: number[] = KINDS.map((kind, c) => KINDS.slice(0, c).filter((k) => k === kind).length);
const count = (kind: Kind) => KINDS.filter((k) => k === kind).length;

const REQ_ID = SLOTS[INSERT_COLUMNS.indexOf('req_id')]!;
const ORG_ID = SLOTS[INSERT_COLUMNS.indexOf('org_id')]!;
const ROWID = SLOTS[INSERT_COLUMNS.indexOf('rowid')]!;

export const reqIdAt = (columns: RequestColumns, row: number): string => columns.texts[REQ_ID]![row]!;
export const orgIdAt = (columns: RequestColumns, row: number): string =>
  columns.dictionaries[ORG_ID]![columns.codes[ORG_ID]![row]!]!;
export const rowidAt = (columns: RequestColumns, row: number): number => columns.numbers[ROWID]![row]!;

/** A batch whose coded columns' values are other than strings: `recoded`'s answer. */
export type RecodedColumns = Omit<RequestColumns, 'dictionaries'> & { dictionaries: readonly (readonly unknown[])[] };

/**
 * The same rows with the values of the columns that travel coded replaced by `recode`'s, a batch's
 * few values at a time rather than a row at a time; `recode` answers undefined to keep a column's.
 */
export function recoded(
  columns: RequestColumns,
  recode: (column: InsertColumn, values: readonly (string | null)[]) => readonly unknown[] | undefined,
): RecodedColumns {
  const dictionaries = columns.dictionaries.map((values) => values as readonly unknown[]);
  INSERT_COLUMNS.forEach((column, c) => {
    if (KINDS[c] !== CODED) return;
    dictionaries[SLOTS[c]!] = recode(column, columns.dictionaries[SLOTS[c]!]!) ?? columns.dictionaries[SLOTS[c]!]!;
  });
  return { ...columns, dictionaries };
}

/** Whether a column travels as an index into its batch's values (`recoded` can replace them). */
export const travelsCoded = (column: InsertColumn): boolean => KIND[column] === CODED;

/** Writes row `row`'s values, in `INSERT_COLUMNS` order, into `out`. */
export function valuesAt(columns: RequestColumns | RecodedColumns, row: number, out: unknown[]): void {
  const { numbers, texts, codes, dictionaries } = columns;
  for (let c = 0; c < KINDS.length; c++) {
    const slot = SLOTS[c]!;
    const kind = KINDS[c];
    if (kind === NUMBER) {
      const value = numbers[slot]![row]!;
      out[c] = Number.isNaN(value) ? null : value;
    } else if (kind === TEXT) out[c] = texts[slot]![row];
    else out[c] = dictionaries[slot]![codes[slot]![row]!];
  }
}

/** Row `row` as a record, written into `out`: one object for every row, nothing allocated a row. */
export function recordAt(columns: RequestColumns, row: number, out: RequestRecord): RequestRecord {
  valuesAt(columns, row, rowValues);
  const record = out as unknown as Record<string, unknown>;
  for (let c = 0; c < REQUEST_COLUMNS.length; c++) record[REQUEST_COLUMNS[c]!] = rowValues[c];
  return out;
}

/** `recordAt`'s row, read once by `valuesAt`. */
const rowValues = new Array<unknown>(INSERT_COLUMNS.length);

/** The rows' values as one array per column, `REQUEST_COLUMNS` order (the rowid left out): PostgreSQL's insert. */
export function requestArrays(columns: RequestColumns): unknown[][] {
  const arrays = REQUEST_COLUMNS.map(() => new Array<unknown>(columns.length));
  const row = new Array<unknown>(INSERT_COLUMNS.length);
  for (let r = 0; r < columns.length; r++) {
    valuesAt(columns, r, row);
    for (let c = 0; c < arrays.length; c++) arrays[c]![r] = row[c];
  }
  return arrays;
}

/**
 * Each row's values (`REQUEST_COLUMNS` order, the rowid left out) as a line of COPY's text
 * format, without its newline: PostgreSQL's copy into an empty log. A coded column's values
 * are escaped once a batch rather than once a row.
 */
export function requestCopyLines(columns: RequestColumns): string[] {
  const coded = columns.dictionaries.map((values) => values.map(copyValue));
  const lines = new Array<string>(columns.length);
  for (let r = 0; r < columns.length; r++) {
    let line = '';
    for (let c = 0; c < REQUEST_COLUMNS.length; c++) {
      const slot = SLOTS[c]!;
      const kind = KINDS[c];
      let value: string;
      if (kind === NUMBER) {
        const number = columns.numbers[slot]![r]!;
        value = Number.isNaN(number) ? copyValue(null) : copyValue(number);
      } else if (kind === TEXT) value = copyValue(columns.texts[slot]![r]);
      else value = coded[slot]![columns.codes[slot]![r]!]!;
      line += c === 0 ? value : '\t' + value;
    }
    lines[r] = line;
  }
  return lines;
}

/** Bytes set aside a row that a batch makes room for at first: a trace id's 16. */
const SHAPE_BYTES_PER_ROW = 16;

/** Collects up to `capacity` rows into columns, and their metadata's shapes when `shapes`. */
export class RequestColumnsBuilder {
  private columns: RequestColumns;
  private indexes: Map<string | null, number>[] = [];
  private shapeIndex = new Map<string | null, number>();
  /** The batch's bytes set aside, written through `hex`, a view of the same memory. */
  private bytes = new Uint8Array(0);
  private hex = Buffer.alloc(0);
  private readonly shaping: boolean;

  constructor(
    private readonly capacity: number,
    { shapes = false } = {},
  ) {
    if (capacity > 65_536) throw new RangeError('a batch of request columns holds at most 65,536 rows');
    this.shaping = shapes;
    this.columns = this.empty();
  }

  get length(): number {
    return this.columns.length;
  }

  add(record: RequestRecord, rowid: number): void {
    // Past the capacity, typed arrays would drop the row's numbers while its texts were kept.
    if (this.columns.length === this.capacity) throw new RangeError('the batch of request columns is full');
    const values = requestValues(record);
    const { numbers, texts, codes, dictionaries } = this.columns;
    const row = this.columns.length++;
    for (let c = 0; c < KINDS.length; c++) {
      const value = c < values.length ? values[c]! : rowid;
      const slot = SLOTS[c]!;
      const kind = KINDS[c];
      if (kind === NUMBER) numbers[slot]![row] = value === null ? NaN : (value as number);
      else if (kind === TEXT) texts[slot]!.push(value as string | null);
      else {
        const index = this.indexes[slot]!;
        let code = index.get(value as string | null);
        if (code === undefined) {
          code = dictionaries[slot]!.push(value as string | null) - 1;
          index.set(value as string | null, code);
        }
        codes[slot]![row] = code;
      }
    }
    if (this.columns.shapes) this.addShape(this.columns.shapes, row, record.metadata);
  }

  /** The rows collected since the last call, forgotten here. */
  take(): RequestColumns {
    const columns = this.columns;
    const shapes = columns.shapes;
    // Its own copy, of the bytes used: a view would take the whole buffer across threads.
    if (shapes) shapes.bytes = this.bytes.slice(0, columns.length === 0 ? 0 : shapes.ends[columns.length - 1]);
    this.columns = this.empty();
    return columns;
  }

  private addShape(shapes: MetadataShapes, row: number, metadata: string): void {
    const shaped = shapeOf(metadata);
    const shape = shaped?.shape ?? null;
    let code = this.shapeIndex.get(shape);
    if (code === undefined) {
      code = shapes.values.push(shape) - 1;
      this.shapeIndex.set(shape, code);
    }
    shapes.codes[row] = code;
    let end = row === 0 ? 0 : shapes.ends[row - 1]!;
    const digits = shaped?.digits;
    if (digits) {
      if (end + digits.length / 2 > this.bytes.length) this.grow(end + digits.length / 2);
      end += this.hex.write(digits, end, 'hex');
    }
    shapes.ends[row] = end;
  }

  private grow(least: number): void {
    const bytes = new Uint8Array(Math.max(least, 2 * this.bytes.length));
    bytes.set(this.bytes);
    this.bytes = bytes;
    this.hex = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);
  }

  private empty(): RequestColumns {
    const slots = (kind: Kind) => Array.from({ length: count(kind) });
    this.indexes = slots(CODED).map(() => new Map());
    if (this.shaping) {
      this.shapeIndex = new Map();
      if (this.bytes.length === 0) this.grow(this.capacity * SHAPE_BYTES_PER_ROW);
    }
    return {
      length: 0,
      numbers: slots(NUMBER).map(() => new Float64Array(this.capacity)),
      texts: slots(TEXT).map(() => []),
      // At most 65,536 rows, so a column's distinct values are coded 0 to 65,535.
      codes: slots(CODED).map(() => new Uint16Array(this.capacity)),
      dictionaries: slots(CODED).map(() => []),
      shapes: this.shaping
        ? // Its bytes are written into this builder's buffer and copied out by `take`.
          {
            codes: new Uint16Array(this.capacity),
            values: [],
            bytes: new Uint8Array(0),
            ends: new Uint32Array(this.capacity),
          }
        : null,
    };
  }
}
