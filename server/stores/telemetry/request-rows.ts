import type { Database, Statement } from 'better-sqlite3';
import { REQUEST_COLUMNS, type RequestRecord } from './request-record.js';
import { metadataOf } from './request-metadata.js';

/**
 * The request-log columns kept as codes into `request_strings` (015_coded_requests.sql), and the
 * column of `request_rows` that holds each code. Their values repeat across rows (three ids of 36
 * characters, the model, the user agent): a code takes one to three bytes in the row and in each
 * index that carries it, where the text took up to 37.
 */
export const CODED_COLUMNS = {
  org_id: 'org_code',
  project_id: 'project_code',
  key_id: 'key_code',
  model: 'model_code',
  termination_reason: 'termination_code',
  upstream_error: 'error_code',
  upstream_model: 'upstream_model_code',
  served_by: 'served_by_code',
  api: 'api_code',
  user_agent: 'user_agent_code',
} as const satisfies Partial<Record<keyof RequestRecord, string>>;

type CodedColumn = keyof typeof CODED_COLUMNS;

/**
 * A request id of the gateway's and the demo's form, `req_` and an even number of lowercase hex
 * digits, is stored as those digits' bytes (017_compact_request_ids.sql): 16 bytes in the row
 * and in each index that carries it, where the gateway's text took 36. Any other id is stored as
 * its text. Between ids of this form, the bytes sort as the texts do (hex digits in ASCII order,
 * a prefix first), so an index on the stored id gives the log's order whenever an organisation
 * holds no id of another form (`hasTextIds`).
 */
const COMPACT_ID = /^req_(?:[0-9a-f]{2})+$/;

/** Whether a request id is of the form stored as bytes. */
export const isCompactRequestId = (id: string): boolean => COMPACT_ID.test(id);

/** The value `request_rows.req_id` holds for a request id; a text tells its writer to note its organisation in `request_text_ids`. */
export const storedRequestId = (id: string): string | Buffer =>
  isCompactRequestId(id) ? Buffer.from(id.slice(4), 'hex') : id;

/** SQL for the stored value of the request id `text` (an expression: a parameter, a column). */
export const storedRequestIdOf = (text: string): string =>
  `CASE WHEN ${compactIdSql(text)} THEN unhex(substr(${text}, 5)) ELSE ${text} END`;

/** SQL true when the text `text` is a request id of the compact form (`COMPACT_ID`). */
const compactIdSql = (text: string): string =>
  `(substr(${text}, 1, 4) = 'req_' AND length(${text}) > 4 AND length(${text}) % 2 = 0
    AND substr(${text}, 5) NOT GLOB '*[^0-9a-f]*')`;

/** SQL for the request id a stored value `stored` is (a column of `request_rows`). */
const requestIdText = (stored: string): string =>
  `CASE WHEN typeof(${stored}) = 'blob' THEN 'req_' || lower(hex(${stored})) ELSE ${stored} END`;

/**
 * A request's timings, stored in whole microseconds where they are (018_compact_timings.sql): an
 * INTEGER of one to four bytes in the row, where a REAL took eight. Any other time (a fraction of
 * a microsecond, or past 9e12 ms) is stored as its REAL. The columns have no affinity, so each
 * value's type says how to read it, and the view reads back the same double to the bit: `k / 1000`
 * is one correctly rounded division in JavaScript and in SQLite alike.
 */
export const TIMING_COLUMNS = [
  'total_ms',
  'ttft_ms',
  'tpot_ms',
  'pre_dispatch_ms',
] as const satisfies readonly (keyof RequestRecord)[];

/** Past this, a time's microseconds are no longer exact integers of a double. */
const MAX_EXACT_MS = 9e12;

/**
 * The value a timing column holds for `ms`: a BigInt, so that better-sqlite3 binds an INTEGER (it
 * binds every number as a REAL, which the column would keep as one).
 */
export function storedMs(ms: number | null): bigint | number | null {
  if (ms === null || !(Math.abs(ms) < MAX_EXACT_MS)) return ms;
  const micros = Math.round(ms * 1000);
  return micros / 1000 === ms ? BigInt(micros) : ms;
}

/** SQL for the stored value of the time `ms` (an expression: a parameter, a column), as `storedMs`. */
export const storedMsOf = (ms: string): string =>
  `CASE WHEN abs(${ms}) < ${MAX_EXACT_MS} AND round(${ms} * 1000) / 1000.0 = ${ms}
    THEN CAST(round(${ms} * 1000) AS INTEGER) ELSE ${ms} END`;

/** SQL for the milliseconds a stored timing `stored` is (a column of `request_rows`). */
const msOf = (stored: string): string =>
  `CASE WHEN typeof(${stored}) = 'integer' THEN ${stored} / 1000.0 ELSE ${stored} END`;

const isTiming = (column: string): column is (typeof TIMING_COLUMNS)[number] =>
  (TIMING_COLUMNS as readonly string[]).includes(column);

/**
 * Two columns stored as their difference from what they nearly always are (026_offset_columns.sql):
 * a status less 200, and the total tokens less the prompt, generated and cache-read tokens. An
 * integer 0 takes no byte of a row (its type says it), where 200 took two and a total one or two:
 * ~4 bytes a row at ten million demo rows. The view adds them back (integers: exact).
 */
const STATUS_BASE = 200;

/** The tokens a row's total is stored against (`prefix`: where its columns are, `r.` or `NEW.`). */
const tokensBaseOf = (prefix: string): string =>
  `(COALESCE(${prefix}prompt_tokens, 0) + ${prefix}tokens_generated + COALESCE(${prefix}cache_read_input_tokens, 0))`;

/** The value `request_rows.status` holds for a status. */
export const storedStatus = (status: number): number => status - STATUS_BASE;

/** The value `request_rows.total_tokens` holds for a row's tokens. */
export const storedTotalTokens = (
  total: number,
  prompt: number | null,
  generated: number,
  cacheRead: number | null,
): number => total - ((prompt ?? 0) + generated + (cacheRead ?? 0));

/** SQL for a stored column's value from the log's own (`NEW.` columns, in the view's trigger). */
const storedOffsetOf = (column: 'status' | 'total_tokens'): string =>
  column === 'status' ? `NEW.status - ${STATUS_BASE}` : `NEW.total_tokens - ${tokensBaseOf('NEW.')}`;

/** SQL for the log's value of a stored column (`request_rows` as `r`). */
const offsetOf = (column: 'status' | 'total_tokens'): string =>
  column === 'status' ? `r.status + ${STATUS_BASE}` : `r.total_tokens + ${tokensBaseOf('r.')}`;

const isOffset = (column: string): column is 'status' | 'total_tokens' =>
  column === 'status' || column === 'total_tokens';

/** SQL true when the organisation of code `orgCode` holds a request id stored as text (writers say so: 017). */
export const hasTextIds = (orgCode: string): string =>
  `EXISTS (SELECT 1 FROM request_text_ids WHERE org_code = ${orgCode})`;

/** A day of `requests_by_cost`, which its expression `ts / 86400000` names (027_cost_index_by_day.sql). */
const COST_INDEX_DAY_MS = 86_400_000;

/**
 * SQL true for a row of `requests` costing at least parameter `param`, as `requests_by_cost` finds
 * it (027): the days of the window @from to @to listed, each looked up for its rows costing that
 * much. Exact whatever the plan: the day of a row in the window is always among them.
 */
export const costAtLeast = (param: string): string => `cost_micro >= @${param}
  AND ts / ${COST_INDEX_DAY_MS} IN (WITH RECURSIVE days (day) AS (SELECT CAST(@from AS INTEGER) / ${COST_INDEX_DAY_MS}
    UNION ALL SELECT day + 1 FROM days WHERE day < CAST(@to AS INTEGER) / ${COST_INDEX_DAY_MS}) SELECT day FROM days)`;

/** SQL for the code of the string `text` (an expression: a parameter, a column), null if it has none. */
export const codeOf = (text: string): string => `(SELECT code FROM request_strings WHERE text = ${text})`;

const isCoded = (column: string): column is CodedColumn => Object.hasOwn(CODED_COLUMNS, column);

/** The `request_rows` column that holds a request-log column's value or its code. */
export const storedColumn = (column: keyof RequestRecord): string => (isCoded(column) ? CODED_COLUMNS[column] : column);

/** The codes a read filters on (`codeOf` in server/analytics/sqlite-sql.ts), and the view shows. */
export const FILTER_CODES = ['org_id', 'project_id', 'key_id', 'model'] as const satisfies readonly CodedColumn[];
export type FilterColumn = (typeof FILTER_CODES)[number];

/**
 * The view that reads `request_rows` as the request log's columns, `REQUEST_COLUMNS`, then the
 * row's `rowid`, its stored request id `req_key` (the order of an index, see `storedRequestId`),
 * its stored metadata `metadata_key` and `metadata_hex` (searched unmade: `metadataMayHoldSql`)
 * and the codes reads filter on (`org_code`, …): every read of the log names
 * `requests` and its columns as before the codes. Each string is a subquery, made only when a
 * read names its column (a join would be made for every row, named or not: SQLite drops an unused
 * LEFT JOIN only outside aggregates). A filter names the code, which an index holds: `org_id =
 * @orgId` is correct but reads every row of the window, `org_code = (SELECT code … @orgId)` an
 * index. `NOT INDEXED` makes the view for reads that start from rows the search index found
 * (server/analytics/search-index.ts): left to itself SQLite would read the window through an index.
 */
function viewSql(name: string, hint: '' | 'NOT INDEXED'): string {
  const columns = REQUEST_COLUMNS.map((column) => {
    if (column === 'req_id') return `${requestIdText('r.req_id')} AS req_id`;
    if (isTiming(column)) return `${msOf(`r.${column}`)} AS ${column}`;
    if (isOffset(column)) return `(${offsetOf(column)}) AS ${column}`;
    if (column === 'metadata') return `${metadataOf('r.metadata', 'r.metadata_hex')} AS metadata`;
    return isCoded(column)
      ? `(SELECT text FROM request_strings WHERE code = r.${CODED_COLUMNS[column]}) AS ${column}`
      : `r.${column}`;
  });
  const codes = FILTER_CODES.map((column) => `r.${CODED_COLUMNS[column]}`);
  const stored = ['r.req_id AS req_key', 'r.metadata AS metadata_key', 'r.metadata_hex'];
  return `CREATE VIEW ${name} AS SELECT ${[...columns, 'r.id AS rowid', ...stored, ...codes].join(', ')}
    FROM request_rows AS r ${hint}`;
}

/**
 * Makes the views over `request_rows` (the step of each migration that remakes them, 017 to 020, 026) and a trigger that writes a row given as the
 * log's columns into it, for rows written by hand in SQL (tests, an operator's repair): the
 * server's writer codes its batches itself (server/ingest/request-inserts.ts).
 */
export function createRequestViews(db: Database): void {
  db.exec(viewSql('requests', ''));
  db.exec(viewSql('requests_unindexed', 'NOT INDEXED'));
  const coded = REQUEST_COLUMNS.filter(isCoded);
  const stored = (column: (typeof REQUEST_COLUMNS)[number]) => {
    if (column === 'req_id') return storedRequestIdOf('NEW.req_id');
    if (isTiming(column)) return storedMsOf(`NEW.${column}`);
    if (isOffset(column)) return storedOffsetOf(column);
    return isCoded(column) ? codeOf(`NEW.${column}`) : `NEW.${column}`;
  };
  db.exec(`CREATE TRIGGER requests_insert INSTEAD OF INSERT ON requests BEGIN
    INSERT INTO request_strings (text)
      SELECT value FROM (${coded.map((column) => `SELECT NEW.${column} AS value`).join(' UNION ALL ')})
      WHERE value IS NOT NULL ON CONFLICT (text) DO NOTHING;
    INSERT INTO request_rows (id, ${REQUEST_COLUMNS.map(storedColumn).join(', ')})
      VALUES (NEW.rowid, ${REQUEST_COLUMNS.map(stored).join(', ')});
    INSERT INTO request_text_ids (org_code)
      SELECT ${codeOf('NEW.org_id')} WHERE typeof(${storedRequestIdOf('NEW.req_id')}) = 'text'
      ON CONFLICT DO NOTHING;
  END`);
}

/**
 * The codes of one writer's strings, remembered for its transaction only: a code made in a
 * transaction that rolls back is gone with it, and another may later be given the same number.
 */
export class RequestStrings {
  private readonly codes = new Map<string, number>();
  private readonly add: Statement<[string]>;
  private readonly find: Statement<[string], number>;

  constructor(db: Database) {
    this.add = db.prepare('INSERT INTO request_strings (text) VALUES (?) ON CONFLICT (text) DO NOTHING');
    this.find = db.prepare<[string], number>('SELECT code FROM request_strings WHERE text = ?').pluck();
  }

  /** The string's code if the store has one, else null (none is made). */
  knownCode(text: string): number | null {
    let code = this.codes.get(text);
    if (code === undefined) {
      code = this.find.get(text);
      if (code === undefined) return null;
      this.codes.set(text, code);
    }
    return code;
  }

  /** The string's code, made if the store has none yet; null for null. */
  codeOf(text: string | null): number | null {
    if (text === null) return null;
    const known = this.knownCode(text);
    if (known !== null) return known;
    this.add.run(text);
    const code = this.find.get(text)!;
    this.codes.set(text, code);
    return code;
  }
}
