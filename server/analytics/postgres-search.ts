import { RARE_SEPARATOR, SEARCH_HOUR_MS } from '../stores/telemetry/postgres/search-columns.js';
import type { AnalyticsSql, Params } from './sql.js';

/**
 * The request log's search through PostgreSQL's index (stores/telemetry/migrations-postgres/
 * 002_search.sql): a row holds the text when one of its common strings does (its set is one of
 * the text's sets) or one of its rare ones does (`search_rare`, through the trigram index).
 */

/** More sets than this make the query's list too long: the rows are read instead. */
const MAX_SETS = 100_000;

export interface PgSearchMatch {
  /** Ids of the sets holding a common string that contains the text. */
  sets: number[];
  /** The text as a LIKE pattern. */
  pattern: string;
  /** SQL true for a row whose rare strings hold the text (`requests`'s columns; parameters `@pattern`, `@text`). */
  inRare: string;
}

/** SQL true for a row whose set is one of `@sets`, false for the others (null for a row without one). */
const IN_SETS = 'search_set = ANY(@sets)';
const NOT_IN_SETS = 'NOT COALESCE(search_set = ANY(@sets), false)';

/**
 * SQL true for a row the search finds. `scan`: the page is to be found by reading the window's
 * rows newest first (most of them hold the text), so the sets' index is kept out of the plan,
 * which would otherwise read every match to sort them.
 */
export function pgSearchCondition(match: PgSearchMatch, { scan }: { scan: boolean }): string {
  if (match.sets.length === 0) return match.inRare;
  return `(${scan ? 'search_set + 0 = ANY(@sets)' : IN_SETS} OR ${match.inRare})`;
}

/**
 * What finds the rows holding `text` (casefolded) in an organisation; null when the index cannot
 * tell (a text holding the rare strings' separator, or holding so short a text that thousands of
 * sets hold it): the caller reads the rows.
 */
export async function pgSearchMatch(sql: AnalyticsSql, orgId: string, text: string): Promise<PgSearchMatch | null> {
  if (text.includes(RARE_SEPARATOR)) return null;
  const pattern = `%${text.replace(/[\\%_]/g, '\\$&')}%`;
  const sets = (
    await sql.all<{ id: number }>(
      `SELECT id FROM search_sets WHERE org_id = @orgId AND terms && ARRAY(
        SELECT id FROM search_common WHERE org_id = @orgId AND text LIKE @pattern) LIMIT @limit`,
      { orgId, pattern, limit: MAX_SETS + 1 },
    )
  ).map((row) => row.id);
  if (sets.length > MAX_SETS) return null;
  // The trigram index needs three letters or digits in a row to narrow anything down (ASCII ones:
  // which others count depends on the database's locale); without them the rows' own strings
  // are read one by one.
  const inRare = /[a-z0-9]{3}/.test(text) ? 'search_rare LIKE @pattern' : 'strpos(search_rare, @text) > 0';
  return { sets, pattern, inRare };
}

/** The match's parameters for its SQL. */
export function pgMatchParams(match: PgSearchMatch, text: string): Params {
  return { sets: match.sets, pattern: match.pattern, text };
}

/**
 * Rows of the organisation in [from, to] the search finds: those of its sets counted by hour
 * (rows of the window's partial hours read), the others found by their rare strings.
 */
export async function pgCountMatches(
  sql: AnalyticsSql,
  match: PgSearchMatch,
  window: { orgId: string; from: number; to: number },
  text: string,
): Promise<number> {
  const params = { ...window, ...pgMatchParams(match, text) };
  const count = async (condition: string, more: Params = {}) =>
    (await sql.get<{ n: number }>(`SELECT COUNT(*) AS n FROM requests WHERE ${condition}`, { ...params, ...more }))!.n;
  const inWindow = 'org_id = @orgId AND ts >= @from AND ts <= @to';
  // The rare strings' rows less those a set finds: a row is counted once.
  let total = await count(`${inWindow} AND ${match.inRare} AND ${NOT_IN_SETS}`);
  if (match.sets.length === 0) return total;
  const firstHour = Math.ceil(window.from / SEARCH_HOUR_MS) * SEARCH_HOUR_MS;
  const endHour = Math.floor((window.to + 1) / SEARCH_HOUR_MS) * SEARCH_HOUR_MS;
  if (firstHour >= endHour) return total + (await count(`${inWindow} AND ${IN_SETS}`));
  const hours = { firstHour, endHour };
  total += (await sql.get<{ n: number }>(
    `SELECT COALESCE(SUM(rows), 0) AS n FROM search_hours
      WHERE org_id = @orgId AND set_id = ANY(@sets) AND hour >= @firstHour AND hour < @endHour`,
    { ...params, ...hours },
  ))!.n;
  total += await count(`org_id = @orgId AND ts >= @from AND ts < @firstHour AND ${IN_SETS}`, hours);
  total += await count(`org_id = @orgId AND ts >= @endHour AND ts <= @to AND ${IN_SETS}`, hours);
  return total;
}
