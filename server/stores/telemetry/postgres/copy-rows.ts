import { finished } from 'node:stream/promises';
import type pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { REQUEST_COLUMNS } from '../request-record.js';
import { REQUEST_ROW_COLUMNS, storableText, type SearchColumns } from './request-sql.js';

/**
 * Rows into tables an import holds alone (empty-store.ts) by `COPY`, PostgreSQL's bulk load,
 * rather than `INSERT … SELECT FROM unnest`: the database parses lines of text instead of
 * arrays, and this thread writes them instead of encoding arrays. No `ON CONFLICT`: a repeated
 * key fails the statement, and with it the import.
 */

/** What COPY's text format gives a meaning to in a value. */
const SPECIAL = /[\\\t\n\r]/;
const SPECIALS = /[\\\t\n\r]/g;
const ESCAPED: Record<string, string> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' };

function copyValue(value: unknown): string {
  if (value === null || value === undefined) return '\\N';
  if (typeof value === 'number' || typeof value === 'bigint') return String(value);
  // bytea's hex form, its backslash escaped for COPY.
  if (value instanceof Uint8Array)
    return '\\\\x' + Buffer.from(value.buffer, value.byteOffset, value.length).toString('hex');
  if (typeof value !== 'string') throw new TypeError(`COPY takes no ${typeof value} value`);
  const text = storableText(value);
  return SPECIAL.test(text) ? text.replace(SPECIALS, (c) => ESCAPED[c]!) : text;
}

/** Rows given by column as COPY's text format: a line a row, values between tabs. */
export function copyText(columns: readonly (readonly unknown[])[], rows: number): string {
  let text = '';
  for (let r = 0; r < rows; r++) {
    text += copyValue(columns[0]![r]);
    for (let c = 1; c < columns.length; c++) text += '\t' + copyValue(columns[c]![r]);
    text += '\n';
  }
  return text;
}

/** Copies rows given by column into `table`'s `columns`. */
export async function copyRows(
  client: pg.ClientBase,
  table: string,
  columns: readonly string[],
  values: readonly (readonly unknown[])[],
  rows: number,
): Promise<void> {
  const stream = client.query(copyFrom(`COPY ${table} (${columns.join(', ')}) FROM STDIN`));
  stream.end(Buffer.from(copyText(values, rows)));
  await finished(stream);
}

/**
 * Copies rows given by column (`REQUEST_COLUMNS` order) with their search columns into
 * `requests`, their ids into `request_ids` first; returns the ids inserted, as stored. When a row
 * repeats a stored id, the ids before it: the statement failed there, and the transaction with it.
 */
export async function copyRequests(
  client: pg.ClientBase,
  values: readonly unknown[][],
  search: SearchColumns,
): Promise<Set<string>> {
  const ids = (values[REQUEST_COLUMNS.indexOf('req_id')] as string[]).map(storableText);
  try {
    const times = values[REQUEST_COLUMNS.indexOf('ts')]!;
    await copyRows(client, 'request_ids', ['req_id', 'ts'], [ids, times], ids.length);
  } catch (error) {
    const repeated = repeatedRow(error);
    if (repeated === null) throw error;
    return new Set(ids.slice(0, repeated));
  }
  await copyRows(client, 'requests', REQUEST_ROW_COLUMNS, [...values, search.sets, search.rare], ids.length);
  return new Set(ids);
}

/**
 * The batch's row (from 0) that repeated a stored request id, from the error's context
 * ("COPY request_ids, line 12": its line, from 1, the only number before any of the row's text,
 * whatever the server's language); null for any other error.
 */
function repeatedRow(error: unknown): number | null {
  const { code, constraint, where } = error as { code?: string; constraint?: string; where?: string };
  if (code !== '23505' || constraint !== 'request_ids_pkey') return null;
  const line = /\d+/.exec(where ?? '');
  return line ? Number(line[0]) - 1 : null;
}
