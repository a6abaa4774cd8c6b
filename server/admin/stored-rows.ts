import BetterSqlite3 from 'better-sqlite3';
import { importSource, type ImportSource, type SourceReader } from '../ingest/import-source.js';
import {
  REQUEST_COLUMNS,
  requestRecord,
  type RequestRecord,
  type RequestValues,
} from '../stores/telemetry/request-record.js';

interface StoredRowsArgs {
  path: string;
}

/** The rows of a telemetry file, in the order they were written, as an import's source (migrate-store). */
export function storedRowsSource(path: string): ImportSource<StoredRowsArgs> {
  return importSource(import.meta.url, { path });
}

/** The rows of a `storedRowsSource`, read on the import's thread from a read-only connection of its own. */
export const readRows: SourceReader<StoredRowsArgs> = ({ path }) => ({ records: storedRows(path) });

function* storedRows(path: string): Generator<RequestRecord> {
  const db = new BetterSqlite3(path, { readonly: true, fileMustExist: true });
  try {
    // One read transaction: the rows of one moment, however long the copy takes.
    db.exec('BEGIN');
    // Read as arrays, each made a record here: better-sqlite3 making an object of each row took
    // 2.5 times as long (a million rows, 12 s against 4.8).
    const rows = db
      .prepare(`SELECT ${REQUEST_COLUMNS.join(', ')} FROM requests ORDER BY rowid`)
      .raw()
      .iterate() as Iterable<RequestValues>;
    for (const row of rows) yield requestRecord(row);
  } finally {
    db.close();
  }
}
