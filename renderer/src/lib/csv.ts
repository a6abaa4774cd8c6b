/**
 * CSV as spreadsheets read it (RFC 4180): fields quoted when they hold a comma, a quote or
 * a line break, quotes doubled, lines ended with CRLF. Text a spreadsheet would run as a
 * formula (a cell starting with = + - @, or a tab or carriage return that some
 * spreadsheets strip first) is prefixed with an apostrophe, so an exported metadata value
 * such as `=HYPERLINK(...)` stays text when the file is opened.
 */

export const CSV_LINE_END = '\r\n';

/** A byte-order mark: spreadsheet programs read the file as UTF-8 only when it starts with one. */
export const CSV_BOM = '\uFEFF';

const FORMULA_START = /^[=+\-@\t\r]/;
const NEEDS_QUOTES = /[",\r\n]/;

/** Text for one cell: null and undefined are empty, objects and arrays are JSON text. */
export function cellText(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  return JSON.stringify(value);
}

/**
 * One escaped cell. Numbers are written as they are: a JavaScript number never reads as
 * a formula, and prefixing a negative figure would turn it into text in the spreadsheet.
 */
export function escapeCell(value: unknown): string {
  let text = cellText(value);
  if (typeof value === 'string' && FORMULA_START.test(text)) text = `'${text}`;
  return NEEDS_QUOTES.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

export function csvLine(values: readonly unknown[]): string {
  return values.map(escapeCell).join(',') + CSV_LINE_END;
}

export type FlatRecord = Record<string, unknown>;

/**
 * Nested objects as one level of dotted columns (`metrics.total_ms`). Paths named in
 * `asJson` stay whole, as JSON text in one column (metadata, whose keys vary per row);
 * arrays are JSON text too. A null object stays one null value under its own name.
 */
export function flatten(value: Readonly<Record<string, unknown>>, asJson: readonly string[] = []): FlatRecord {
  const out: FlatRecord = {};
  const walk = (node: Readonly<Record<string, unknown>>, prefix: string) => {
    for (const [name, child] of Object.entries(node)) {
      const path = prefix ? `${prefix}.${name}` : name;
      if (asJson.includes(path)) out[path] = child === null || child === undefined ? child : JSON.stringify(child);
      else if (child !== null && typeof child === 'object' && !Array.isArray(child))
        walk(child as Record<string, unknown>, path);
      else out[path] = child;
    }
  };
  walk(value, '');
  return out;
}

/**
 * The header line, then one line per record in the header's order. A column a record does
 * not have (the `key.id` of a row whose `key` is null) is an empty cell, so every line has
 * as many cells as the header.
 */
export function csvHeader(columns: readonly string[]): string {
  return csvLine(columns);
}

export function csvRecord(columns: readonly string[], record: FlatRecord): string {
  return csvLine(columns.map((column) => record[column]));
}

export function toCsv(columns: readonly string[], records: readonly FlatRecord[]): string {
  return csvHeader(columns) + records.map((record) => csvRecord(columns, record)).join('');
}

/**
 * Reads CSV written as above back into rows of cells (quotes undone, CRLF or LF line
 * ends). The console does not import CSV; this is the check that what it writes reads
 * back the same, used by the tests.
 */
export function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = '';
  let quoted = false;
  let i = text.startsWith(CSV_BOM) ? 1 : 0;
  for (; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        cell += '"';
        i++;
      } else if (c === '"') quoted = false;
      else cell += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      row.push(cell);
      cell = '';
    } else if (c === '\n' || c === '\r') {
      if (c === '\r' && text[i + 1] === '\n') i++;
      row.push(cell);
      rows.push(row);
      row = [];
      cell = '';
    } else cell += c;
  }
  if (cell !== '' || row.length > 0) {
    row.push(cell);
    rows.push(row);
  }
  return rows;
}
