import { errorMessage } from '../../bridge.js';
import { api } from '../../state/api.js';
import { latest, organisationStore } from '../../state/organisation-scope.js';
import type { RequestsQuery } from './request-query.js';
import type { RequestPage, RequestRow } from './request-row.js';

/**
 * The page of the request log on screen and the row opened in the detail panel. Answers
 * arrive out of order when filters change quickly; only the answer to the latest query
 * is kept.
 */

interface RequestsState {
  page: RequestPage | null;
  /** The query (as JSON) the shown page answers; differs from `asked` while loading. */
  answered: string | null;
  asked: string | null;
  loading: boolean;
  error: string | null;
  /** The row in the detail panel; it stays open while the table pages on. */
  selected: RequestRow | null;
  load(query: RequestsQuery): Promise<void>;
  reload(): Promise<void>;
  select(row: RequestRow | null): void;
}

const reads = latest();

export const useRequests = organisationStore<RequestsState>()((set, get) => ({
  page: null,
  answered: null,
  asked: null,
  loading: false,
  error: null,
  selected: null,
  async load(query) {
    const key = JSON.stringify(query);
    // Keyed by the query: asking it again does not drop the answer on its way. The same query
    // asked again of another organisation does: its answer is the one kept.
    const current = reads.ask(key);
    set({ asked: key, loading: true, error: null });
    try {
      const page = await api('api.requests', { query });
      if (current()) set({ page, answered: key, loading: false });
    } catch (error) {
      if (current()) set({ error: errorMessage(error), loading: false });
    }
  },
  async reload() {
    const { asked } = get();
    if (asked) await get().load(JSON.parse(asked) as RequestsQuery);
  },
  select(row) {
    set({ selected: row });
  },
}));
