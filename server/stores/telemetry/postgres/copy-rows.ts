import { finished } from 'node:stream/promises';
import type pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { dayOf } from './request-days.js';
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

/** A value as COPY's text format writes it. */
export function copyValue(value: unknown): string {
  if (value === null || value === undefined) return '\\N';
  if (typeof value === 'number' || typeof value === 'bigint') return String(value);
  // bytea's hex form, its backslash escaped for COPY.
  if (value instanceof Uint8Array)
    return '\\\\x' + Buffer.from(value.buffer, value.byteOffset, value.length).toString('hex');
  if (typeof value !== 'string') throw new TypeError(`COPY takes no ${typeof value} value`);
  const text = storableText(value);
  return SPECIAL.test(text) ? text.replace(SPECIALS, (c) => ESCAPED[c]!) : text;
}

/** The first `rows` rows given by column as COPY's text format: a line a row, values between tabs. */
function copyTextOf(columns: readonly (readonly unknown[])[], rows: number): string {
  let text = '';
  for (let r = 0; r < rows; r++) {
    text += copyValue(columns[0]![r]);
    for (let c = 1; c < columns.length; c++) text += '\t' + copyValue(columns[c]![r]);
    text += '\n';
  }
  return text;
}

/** Copies the first `rows` rows given by column into `table`'s `columns`. */
export async function copyRows(
  client: pg.ClientBase,
  table: string,
  columns: readonly string[],
  values: readonly (readonly unknown[])[],
  rows: number,
): Promise<void> {
  await copyText(client, `COPY ${table} (${columns.join(', ')}) FROM STDIN`, copyTextOf(values, rows));
}

/** Sends `text` (lines of COPY's text format) to the `COPY … FROM STDIN` statement `sql`. */
async function copyText(client: pg.ClientBase, sql: string, text: string): Promise<void> {
  const stream = client.query(copyFrom(sql));
  stream.end(Buffer.from(text));
  await finished(stream);
}

/**
 * Copies rows, each given as its columns' COPY line (`REQUEST_COLUMNS` order, no newline), with
 * their search columns into their day tables of `requests` (`dayTable` names each), their ids
 * into `request_ids` first. The rows are written frozen and their pages marked all-visible, so
 * that no VACUUM rewrites them: each day table was truncated or made in the transaction (see
 * `takeEmptyRequests`), and this runs outside any savepoint, else the statement fails. Returns
 * the ids inserted, as stored; when a row repeats a stored id, the ids before it: the statement
 * failed there, and the transaction with it.
 */
export async function copyRequests(
  client: pg.ClientBase,
  rows: { ids: readonly string[]; times: readonly number[]; lines: readonly string[] },
  search: SearchColumns,
  dayTable: (day: number) => string,
): Promise<Set<string>> {
  const ids = rows.ids.map(storableText);
  try {
    await copyRows(client, 'request_ids', ['req_id', 'ts'], [ids, rows.times], ids.length);
  } catch (error) {
    const repeated = repeatedRow(error);
    if (repeated === null) throw error;
    return new Set(ids.slice(0, repeated));
  }
  for (const [day, ofDay] of rowsByDay(rows.times)) {
    let text = '';
    for (const r of ofDay) {
      text += `${rows.lines[r]!}\t${copyValue(search.sets[r])}\t${copyValue(search.rare[r])}\n`;
    }
    const table = client.escapeIdentifier(dayTable(day));
    await copyText(client, `COPY ${table} (${REQUEST_ROW_COLUMNS.join(', ')}) FROM STDIN (FREEZE)`, text);
  }
  return new Set(ids);
}

/** The rows (their indexes) of each day the times fall on. */
function rowsByDay(times: readonly number[]): Map<number, number[]> {
  const days = new Map<number, number[]>();
  times.forEach((ts, row) => {
    const day = dayOf(ts);
    const rows = days.get(day);
    if (rows) rows.push(row);
    else days.set(day, [row]);
  });
  return days;
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
