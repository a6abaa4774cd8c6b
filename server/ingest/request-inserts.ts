import type { Database, Statement } from 'better-sqlite3';
import { BufferedInsert } from '../stores/telemetry/buffered-insert.js';
import { newShapeCode } from '../stores/telemetry/request-metadata.js';
import {
  CODED_COLUMNS,
  storedColumn,
  storedMs,
  storedRequestId,
  storedStatus,
  storedTotalTokens,
  TIMING_COLUMNS,
  type RequestStrings,
} from '../stores/telemetry/request-rows.js';
import {
  hexAt,
  INSERT_COLUMNS,
  recoded,
  rowidAt,
  travelsCoded,
  valuesAt,
  type RequestColumns,
} from './request-columns.js';

/** `request_rows`' columns in `INSERT_COLUMNS` order (the rowid is its `id`), then the bytes its metadata's shape set aside. */
const STORED = [...INSERT_COLUMNS.map((column) => (column === 'rowid' ? 'id' : storedColumn(column))), 'metadata_hex'];
const CODED = new Set<string>(Object.keys(CODED_COLUMNS));
const REQ_ID = INSERT_COLUMNS.indexOf('req_id');
const ORG_ID = INSERT_COLUMNS.indexOf('org_id');
const TIMINGS = TIMING_COLUMNS.map((column) => INSERT_COLUMNS.indexOf(column));
const METADATA = INSERT_COLUMNS.indexOf('metadata');
const STATUS = INSERT_COLUMNS.indexOf('status');
const TOTAL = INSERT_COLUMNS.indexOf('total_tokens');
const PROMPT = INSERT_COLUMNS.indexOf('prompt_tokens');
const GENERATED = INSERT_COLUMNS.indexOf('tokens_generated');
const CACHE_READ = INSERT_COLUMNS.indexOf('cache_read_input_tokens');
const METADATA_HEX = INSERT_COLUMNS.length;
for (const column of INSERT_COLUMNS) {
  // A column the store codes is coded a batch's values at a time: it must travel coded.
  if (CODED.has(column) && !travelsCoded(column)) throw new Error(`${column} is stored coded but travels as text`);
}

/** Writes an import's request rows, several to a statement, and finds a repeated request id among them. */
export class RequestInserts {
  private readonly insert: BufferedInsert;
  private readonly countRowids: Statement<[number, number], number>;
  private readonly row = new Array<unknown>(STORED.length);
  /** Organisations (codes) of the batch's ids stored as text (request-rows.ts, `hasTextIds`). */
  private readonly textIds = new Set<number>();
  private readonly noteTextIds: Statement<[number]>;

  /** `strings`: the codes of the transaction's strings. */
  constructor(
    db: Database,
    private readonly strings: RequestStrings,
  ) {
    this.insert = new BufferedInsert(db, `request_rows (${STORED.join(', ')})`, STORED.length);
    this.noteTextIds = db.prepare('INSERT INTO request_text_ids (org_code) VALUES (?) ON CONFLICT DO NOTHING');
    this.countRowids = db
      .prepare<[number, number], number>('SELECT COUNT(*) FROM request_rows WHERE id BETWEEN ? AND ?')
      .pluck();
  }

  /**
   * Writes `rows`, whose rowids follow one another; returns the index of the first whose
   * request id is already stored, or -1.
   */
  write(rows: RequestColumns): number {
    const shapes = rows.shapes;
    if (!shapes) throw new Error("a batch for SQLite's store comes with its metadata's shapes (RequestColumnsBuilder)");
    const coded = recoded(rows, (column, values) =>
      CODED.has(column) ? values.map((text) => this.strings.codeOf(text)) : undefined,
    );
    // Each shape's code once a batch (a lookup a row took ~0.35 µs), null for none yet, as a
    // BigInt: better-sqlite3 binds every number as a REAL, which the column would keep as one.
    const bound = shapes.values.map((shape) => {
      const code = shape === null ? null : this.strings.knownCode(shape);
      return code === null ? null : BigInt(code);
    });
    try {
      for (let i = 0; i < rows.length; i++) {
        valuesAt(coded, i, this.row);
        const id = storedRequestId(this.row[REQ_ID] as string);
        if (typeof id === 'string') this.textIds.add(this.row[ORG_ID] as number);
        this.row[REQ_ID] = id;
        for (const at of TIMINGS) this.row[at] = storedMs(this.row[at] as number | null);
        const row = this.row as (number | null)[];
        row[TOTAL] = storedTotalTokens(row[TOTAL]!, row[PROMPT]!, row[GENERATED]!, row[CACHE_READ]!);
        row[STATUS] = storedStatus(row[STATUS]!);
        const shape = shapes.codes[i]!;
        const text = shapes.values[shape] ?? null;
        if (bound[shape] === null && text !== null) {
          const code = newShapeCode(this.strings, text);
          if (code !== null) bound[shape] = BigInt(code);
        }
        // A row whose shape has no code keeps its JSON whole, the digits in it.
        const stored = bound[shape];
        this.row[METADATA_HEX] = stored === null ? null : hexAt(shapes, i);
        if (stored !== null) this.row[METADATA] = stored;
        this.insert.add(this.row);
      }
      this.insert.flush();
      this.writeTextIds();
      return -1;
    } catch (error) {
      if (!isRepeatedRequestId(error)) throw error;
      this.writeTextIds();
      // Every row before the repeat was written, in order: it is the first missing.
      const first = rowidAt(rows, 0);
      return this.countRowids.get(first, first + rows.length - 1)!;
    }
  }

  /** Notes the organisations of the ids stored as text since the last call (a few written rows too many is harmless). */
  private writeTextIds(): void {
    for (const orgCode of this.textIds) this.noteTextIds.run(orgCode);
    this.textIds.clear();
  }
}

function isRepeatedRequestId(error: unknown): boolean {
  return (
    error instanceof Error &&
    (error as { code?: unknown }).code === 'SQLITE_CONSTRAINT_UNIQUE' &&
    error.message.endsWith('request_rows.req_id')
  );
}
