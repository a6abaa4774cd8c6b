import { searchTexts } from '../search-terms.js';
import { byKey, storableText, type SearchColumns } from './request-sql.js';

/**
 * The search index of the request log on PostgreSQL (migrations-postgres/002_search.sql), as
 * its writers keep it: each row's common strings as a numbered set, its rare ones as text for
 * the trigram index, and the rows of each set by hour.
 */

/** Between a row's rare strings in `search_rare`: a search text holding it reads the rows instead. */
export const RARE_SEPARATOR = '\u0001';
/** The grain of `search_hours`. */
export const SEARCH_HOUR_MS = 3_600_000;

/**
 * Strings, sets and strings seen once, each remembered up to this many, then forgotten
 * together: forgetting changes which strings are common, never what a search finds.
 */
const MAX_REMEMBERED = 100_000;

/** A statement run outside the rows' transaction (see `SearchTerms.columns`). */
export type Query = (text: string, values: unknown[]) => Promise<{ rows: unknown[] }>;

/** Rows by organisation, set and hour, to add to `search_hours`. */
export class SearchHours {
  private readonly cells = new Map<string, [orgId: string, set: number, hour: number, rows: number]>();

  get size(): number {
    return this.cells.size;
  }

  add(orgId: string, set: number | null, ts: number): void {
    if (set === null) return;
    const hour = Math.floor(ts / SEARCH_HOUR_MS) * SEARCH_HOUR_MS;
    const key = `${orgId}\0${set}\0${hour}`;
    const cell = this.cells.get(key);
    if (cell) cell[3]++;
    else this.cells.set(key, [orgId, set, hour, 1]);
  }

  /** The cells as columns for `unnest`, in key order (the order every writer takes their locks in), and forgotten here. */
  take(): unknown[][] {
    const cells = [...this.cells.values()].sort(byKey(3));
    this.cells.clear();
    return [0, 1, 2, 3].map((c) => cells.map((cell) => cell[c]));
  }
}

const CELLS = 'unnest($1::text[], $2::int8[], $3::int8[], $4::int8[])';

/** Adds cells (`SearchHours.take`) to `search_hours`, or to a table staged like it. */
export const addHoursSql = (table = 'search_hours') => `INSERT INTO ${table} AS t (org_id, set_id, hour, rows)
  SELECT * FROM ${CELLS} ON CONFLICT (org_id, set_id, hour) DO UPDATE SET rows = t.rows + excluded.rows`;

/** Staged cells added to `search_hours` at an import's commit, in key order. */
export const mergeHoursSql = (stage: string) => `INSERT INTO search_hours AS t (org_id, set_id, hour, rows)
  SELECT org_id, set_id, hour, SUM(rows) FROM ${stage} GROUP BY org_id, set_id, hour ORDER BY org_id, set_id, hour
  ON CONFLICT (org_id, set_id, hour) DO UPDATE SET rows = t.rows + excluded.rows`;

export const stageHoursSql = (stage: string) =>
  `INSERT INTO ${stage} (org_id, set_id, hour, rows) SELECT * FROM ${CELLS}`;

/**
 * Values by organisation, then text: a row's strings are looked up as they are, where a key of
 * the two joined made and hashed a new string each time (a million demo rows' search columns,
 * 4.6 s against 2.8).
 */
class ByOrg<V> {
  private readonly orgs = new Map<string, Map<string, V>>();
  /** Texts held, over every organisation. */
  size = 0;

  of(org: string): ReadonlyMap<string, V> | undefined {
    return this.orgs.get(org);
  }

  set(org: string, text: string, value: V): void {
    let texts = this.orgs.get(org);
    if (!texts) this.orgs.set(org, (texts = new Map()));
    const before = texts.size;
    texts.set(text, value);
    this.size += texts.size - before;
  }

  delete(org: string, text: string): void {
    const texts = this.orgs.get(org);
    if (texts?.delete(text)) this.size--;
  }

  clear(): void {
    this.orgs.clear();
    this.size = 0;
  }

  /** Every [organisation, text, value]. */
  *entries(): Generator<[string, string, V]> {
    for (const [org, texts] of this.orgs) for (const [text, value] of texts) yield [org, text, value];
  }
}

/**
 * Which strings are common: those this writer has seen before, in an earlier row or earlier in
 * the same batch, or found numbered already. Their numbers and the sets' are written outside
 * the rows' transaction and committed at once (a number nobody uses is harmless), so that a
 * long import holds no lock another writer would wait for.
 */
export class SearchTerms {
  /** Common strings' ids by organisation and text. */
  private readonly common = new ByOrg<number>();
  /** Sets' ids by organisation and their ids (`${orgId}\0{1,2}`). */
  private readonly sets = new Map<string, number>();
  /** Strings seen once, rare where they were seen. */
  private readonly seen = new ByOrg<true>();

  /** The search columns of rows (given by column); `query` runs the numbering's statements. */
  async columns(
    orgIds: readonly string[],
    reqIds: readonly string[],
    metadata: readonly string[],
    query: Query,
  ): Promise<SearchColumns> {
    for (const remembered of [this.common, this.sets, this.seen])
      if (remembered.size > MAX_REMEMBERED) remembered.clear();
    const orgs = orgIds.map(storableText);
    const texts = reqIds.map((id, i) => searchTexts({ req_id: id, metadata: metadata[i]! }).map(storableText));
    // Strings not known to be common, with their count in the batch: seen twice, they are.
    const unknown = new ByOrg<number>();
    texts.forEach((strings, i) => {
      const org = orgs[i]!;
      const common = this.common.of(org);
      for (let j = 1; j < strings.length; j++) {
        const text = strings[j]!;
        if (!common?.has(text)) unknown.set(org, text, (unknown.of(org)?.get(text) ?? 0) + 1);
      }
    });
    const promoted: [string, string][] = [];
    for (const [org, text, n] of unknown.entries())
      if (n > 1 || this.seen.of(org)?.has(text)) promoted.push([org, text]);
    // What this batch numbers is kept apart: another batch may forget the shared maps meanwhile.
    const numbered = promoted.length > 0 ? await this.number(promoted, query) : new ByOrg<number>();

    const setKeys: (string | null)[] = [];
    const setIds = new Map<string, number>();
    const rare: string[] = [];
    texts.forEach((strings, i) => {
      const org = orgs[i]!;
      const [mine, common] = [numbered.of(org), this.common.of(org)];
      const ids: number[] = [];
      let own = strings[0]!;
      for (let j = 1; j < strings.length; j++) {
        const text = strings[j]!;
        const id = mine?.get(text) ?? common?.get(text);
        if (id !== undefined) ids.push(id);
        else {
          own += RARE_SEPARATOR + text;
          this.seen.set(org, text, true);
        }
      }
      rare.push(own);
      const set = ids.length === 0 ? null : `${org}\0{${ids.sort((a, b) => a - b).join(',')}}`;
      setKeys.push(set);
      const id = set === null ? undefined : this.sets.get(set);
      if (id !== undefined) setIds.set(set!, id);
    });
    const newSets = [...new Set(setKeys.filter((key): key is string => key !== null && !setIds.has(key)))];
    if (newSets.length > 0) for (const [key, id] of await this.numberSets(newSets, query)) setIds.set(key, id);
    return { sets: setKeys.map((key) => (key === null ? null : setIds.get(key)!)), rare };
  }

  /** Numbers common strings ([organisation, text]), in key order; their ids, remembered too. */
  private async number(strings: [string, string][], query: Query): Promise<ByOrg<number>> {
    strings.sort(byKey(2));
    const [orgs, texts] = [strings.map((pair) => pair[0]), strings.map((pair) => pair[1])];
    await query(
      `INSERT INTO search_common (org_id, text) SELECT * FROM unnest($1::text[], $2::text[]) AS g (org_id, text)
        ORDER BY 1, 2 ON CONFLICT DO NOTHING`,
      [orgs, texts],
    );
    const found = await query(
      `SELECT c.org_id, c.text, c.id FROM search_common c JOIN unnest($1::text[], $2::text[]) AS g (org_id, text)
        ON c.org_id = g.org_id COLLATE "C" AND c.text = g.text COLLATE "C"`,
      [orgs, texts],
    );
    const ids = new ByOrg<number>();
    for (const row of found.rows as { org_id: string; text: string; id: number }[]) {
      ids.set(row.org_id, row.text, row.id);
      this.common.set(row.org_id, row.text, row.id);
      this.seen.delete(row.org_id, row.text);
    }
    return ids;
  }

  /** Numbers sets (keys `${orgId}\0{ids}`); their ids, remembered too. */
  private async numberSets(keys: string[], query: Query): Promise<Map<string, number>> {
    const [orgs, terms] = split(keys);
    await query(
      `INSERT INTO search_sets (org_id, terms) SELECT org_id, CAST(terms AS int8[])
        FROM unnest($1::text[], $2::text[]) AS g (org_id, terms) ORDER BY 1, 2 ON CONFLICT DO NOTHING`,
      [orgs, terms],
    );
    const found = await query(
      `SELECT s.org_id, CAST(s.terms AS text) AS terms, s.id FROM search_sets s
        JOIN unnest($1::text[], $2::text[]) AS g (org_id, terms)
        ON s.org_id = g.org_id COLLATE "C" AND s.terms = CAST(g.terms AS int8[])`,
      [orgs, terms],
    );
    const ids = new Map<string, number>();
    for (const row of found.rows as { org_id: string; terms: string; id: number }[]) {
      ids.set(`${row.org_id}\0${row.terms}`, row.id);
      this.sets.set(`${row.org_id}\0${row.terms}`, row.id);
    }
    return ids;
  }
}

/** Keys `${orgId}\0${rest}` sorted, as two columns. */
function split(keys: string[]): [string[], string[]] {
  const pairs = keys.map((key) => {
    const at = key.indexOf('\0');
    return [key.slice(0, at), key.slice(at + 1)] as [string, string];
  });
  pairs.sort(byKey(2));
  return [pairs.map((pair) => pair[0]), pairs.map((pair) => pair[1])];
}
