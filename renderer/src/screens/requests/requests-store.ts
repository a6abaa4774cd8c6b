import { errorMessage } from '../../bridge.js';
import { api } from '../../state/api.js';
import { latest, organisationStore } from '../../state/organisation-scope.js';
import type { RequestsQuery } from './request-query.js';
import type { RequestPage, RequestRow } from './request-row.js';

/**
 * The page of the request log on screen and the row opened in the detail panel. Answers
 * arrive out of order when filters change quickly; only the answer to the latest query
 * is kept.
 *
 * Following (live mode) re-reads the first page through the same `load`, in the background:
 * the page on screen stays put (no loading state, no flicker), a failure keeps the rows and
 * its message (shown once, not cleared and raised again on every attempt), and the rows that
 * were not on the page before are marked `fresh` for the table to highlight.
 */

interface LoadOptions {
  /**
   * A follow refresh, or the screen opened again on the page it shows: the page stays as it is
   * until the answer, and keeps its rows if it fails.
   */
  background?: boolean;
  /**
   * Rows the answer brings are marked `fresh` (a follow refresh); false for a screen opened
   * again, whose rows were not followed meanwhile (on a later page they are only older rows
   * pushed down).
   */
  markNew?: boolean;
}

interface RequestsState {
  page: RequestPage | null;
  /** The query (as JSON) the shown page answers; differs from `asked` while loading. */
  answered: string | null;
  asked: string | null;
  loading: boolean;
  error: string | null;
  /** When (Date.now()) the last load was asked for, answered or not; null before the first. */
  askedAt: number | null;
  /** When (Date.now()) the page on screen was read; null before the first answer. */
  updatedAt: number | null;
  /** The ids of rows the last follow refresh brought onto the page. */
  fresh: ReadonlySet<string>;
  /** The row in the detail panel; it stays open while the table pages on. */
  selected: RequestRow | null;
  /** Live mode: the first page is re-read every few seconds while the person is not reading it. */
  following: boolean;
  load(query: RequestsQuery, options?: LoadOptions): Promise<void>;
  reload(): Promise<void>;
  /** One follow refresh of the query on screen; nothing while a load is on its way or off page 1. */
  refresh(): Promise<void>;
  select(row: RequestRow | null): void;
  setFollowing(on: boolean): void;
}

const reads = latest();
const NONE: ReadonlySet<string> = new Set();

/** The rows of `next` that `before` did not hold. */
function newIds(before: readonly RequestRow[], next: readonly RequestRow[]): ReadonlySet<string> {
  const known = new Set(before.map((row) => row.req_id));
  const fresh = next.filter((row) => !known.has(row.req_id)).map((row) => row.req_id);
  return fresh.length > 0 ? new Set(fresh) : NONE;
}

/** The same rows in the same order: the table keeps its array (and its scroll and active row). */
function sameRows(a: readonly RequestRow[], b: readonly RequestRow[]): boolean {
  return a.length === b.length && a.every((row, i) => row.req_id === b[i]?.req_id);
}

export const useRequests = organisationStore<RequestsState>()((set, get) => ({
  page: null,
  answered: null,
  asked: null,
  loading: false,
  error: null,
  askedAt: null,
  updatedAt: null,
  fresh: NONE,
  selected: null,
  following: false,
  async load(query, { background = false, markNew = background } = {}) {
    const key = JSON.stringify(query);
    // Keyed by the query: asking it again does not drop the answer on its way. The same query
    // asked again of another organisation does: its answer is the one kept.
    const current = reads.ask(key);
    if (background) set({ asked: key, askedAt: Date.now() });
    else set({ asked: key, askedAt: Date.now(), loading: true, error: null });
    try {
      const page = await api('api.requests', { query });
      if (!current()) return;
      const { page: before, answered } = get();
      // A refresh of the page on screen: new rows are marked, and an unchanged page is left as it is.
      const same = background && before !== null && answered === key;
      const shown = same && sameRows(before.requests, page.requests) ? { ...page, requests: before.requests } : page;
      set({
        page: shown,
        answered: key,
        loading: false,
        error: null,
        updatedAt: Date.now(),
        fresh: same && markNew ? newIds(before.requests, page.requests) : NONE,
      });
    } catch (error) {
      if (current()) set({ error: errorMessage(error), loading: false });
    }
  },
  async reload() {
    const { asked } = get();
    if (asked) await get().load(JSON.parse(asked) as RequestsQuery);
  },
  async refresh() {
    const { asked, loading } = get();
    if (!asked || loading) return;
    const query = JSON.parse(asked) as RequestsQuery;
    if ((query.offset ?? 0) !== 0) return;
    await get().load(query, { background: true });
  },
  select(row) {
    set({ selected: row });
  },
  setFollowing(on) {
    set({ following: on });
  },
}));
