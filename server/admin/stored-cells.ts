import type { Database } from 'better-sqlite3';
import type { CopiedCells } from '../ingest/record-requests.js';
import type { CellPart } from '../stores/telemetry/postgres/request-import.js';
import { ROLLUP_TABLES, type RollupRow } from '../stores/telemetry/rollup-writer.js';

/** Cells a part (one COPY statement) holds at most. */
const PART_CELLS = 10_000;

/**
 * A telemetry file's rollup cells as migrate-store copies them: read on `file`'s connection (the
 * copy's, which holds the file's write lock, so they are the cells of the rows copied), table by
 * table, with what each table's first measure adds up to, for the check after the copy.
 */
export function storedCells(file: Database): CopiedCells {
  const sum = ({ name, sums }: (typeof ROLLUP_TABLES)[number]) =>
    file.prepare(`SELECT COALESCE(SUM(${sums[0]}), 0) FROM ${name}`).pluck().safeIntegers().get() as bigint;
  return { parts: cellParts(file), sums: ROLLUP_TABLES.map(sum) };
}

function* cellParts(file: Database): Generator<CellPart> {
  for (const [table, { name, columns }] of ROLLUP_TABLES.entries()) {
    let rows: RollupRow[] = [];
    for (const row of file
      .prepare(`SELECT ${columns.join(', ')} FROM ${name}`)
      .raw()
      .iterate()) {
      rows.push(row as RollupRow);
      if (rows.length === PART_CELLS) {
        yield { table, rows };
        rows = [];
      }
    }
    if (rows.length > 0) yield { table, rows };
  }
}
