import type { Database, Statement } from 'better-sqlite3';
import { BufferedInsert } from '../stores/telemetry/buffered-insert.js';
import { REQUEST_COLUMNS } from '../stores/telemetry/request-record.js';
import { ROW, type RowValues } from './import-batches.js';

/** Writes an import's request rows, several to a statement, and finds a repeated request id among them. */
export class RequestInserts {
  private readonly insert: BufferedInsert;
  private readonly countRowids: Statement<[number, number], number>;

  constructor(db: Database) {
    // Rowid last: `RowValues`.
    this.insert = new BufferedInsert(db, `requests (${REQUEST_COLUMNS.join(', ')}, rowid)`, REQUEST_COLUMNS.length + 1);
    this.countRowids = db
      .prepare<[number, number], number>('SELECT COUNT(*) FROM requests WHERE rowid BETWEEN ? AND ?')
      .pluck();
  }

  /**
   * Writes `rows`, whose rowids follow one another; returns the index of the first whose
   * request id is already stored, or -1.
   */
  write(rows: readonly RowValues[]): number {
    try {
      for (const row of rows) this.insert.add(row);
      this.insert.flush();
      return -1;
    } catch (error) {
      if (!isRepeatedRequestId(error)) throw error;
      // Every row before the repeat was written, in order: it is the first missing.
      const first = rows[0]![ROW.rowid] as number;
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
