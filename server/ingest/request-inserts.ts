import type { Database, Statement } from 'better-sqlite3';
import { BufferedInsert } from '../stores/telemetry/buffered-insert.js';
import { INSERT_COLUMNS, rowidAt, valuesAt, type RequestColumns } from './request-columns.js';

/** Writes an import's request rows, several to a statement, and finds a repeated request id among them. */
export class RequestInserts {
  private readonly insert: BufferedInsert;
  private readonly countRowids: Statement<[number, number], number>;
  private readonly row = new Array<unknown>(INSERT_COLUMNS.length);

  constructor(db: Database) {
    this.insert = new BufferedInsert(db, `requests (${INSERT_COLUMNS.join(', ')})`, INSERT_COLUMNS.length);
    this.countRowids = db
      .prepare<[number, number], number>('SELECT COUNT(*) FROM requests WHERE rowid BETWEEN ? AND ?')
      .pluck();
  }

  /**
   * Writes `rows`, whose rowids follow one another; returns the index of the first whose
   * request id is already stored, or -1.
   */
  write(rows: RequestColumns): number {
    try {
      for (let i = 0; i < rows.length; i++) {
        valuesAt(rows, i, this.row);
        this.insert.add(this.row);
      }
      this.insert.flush();
      return -1;
    } catch (error) {
      if (!isRepeatedRequestId(error)) throw error;
      // Every row before the repeat was written, in order: it is the first missing.
      const first = rowidAt(rows, 0);
      return this.countRowids.get(first, first + rows.length - 1)!;
    }
  }
}

function isRepeatedRequestId(error: unknown): boolean {
  return (
    error instanceof Error &&
    (error as { code?: unknown }).code === 'SQLITE_CONSTRAINT_PRIMARYKEY' &&
    error.message.endsWith('requests.req_id')
  );
}
