import type { CallArgs, CallResult } from '#contract';
import { BridgeError, errorMessage } from '../../bridge.js';
import { api } from '../../state/api.js';
import { latest, organisationStore } from '../../state/organisation-scope.js';

/**
 * The organisation's spend as GET /analytics/spend gives it (beyond the contract): deposits,
 * limits and settled spend, each key's rate and forecast, a page at a time. A control plane
 * without the endpoint answers 404: the screen then says it is not offered.
 */

export type SpendReport = CallResult<'api.spend'>;
export type SpendKey = SpendReport['keys'][number];
export type SpendQuery = NonNullable<CallArgs<'api.spend'>['query']>;
export type SpendSort = NonNullable<SpendQuery['sort']>;

interface SpendState {
  report: SpendReport | null;
  loading: boolean;
  error: string | null;
  notOffered: boolean;
  /** The query (as JSON) `report` answers, and when (Date.now()) it was read. */
  answered: string | null;
  at: number | null;
  /** When the report on screen was asked for (Date.now()), for polling. */
  askedAt: number | null;
  /** Reads the report; `quietly` (a background refresh) leaves the screen as it is meanwhile. */
  load(query: SpendQuery, quietly?: boolean): Promise<void>;
}

const reads = latest();

export const useSpendStore = organisationStore<SpendState>()((set) => ({
  report: null,
  loading: false,
  error: null,
  notOffered: false,
  answered: null,
  at: null,
  askedAt: null,
  async load(query, quietly = false) {
    const current = reads.ask();
    set(quietly ? { askedAt: Date.now() } : { loading: true, askedAt: Date.now() });
    try {
      const report = await api('api.spend', { query });
      if (current())
        set({
          report,
          answered: JSON.stringify(query),
          at: Date.now(),
          loading: false,
          error: null,
          notOffered: false,
        });
    } catch (error) {
      if (!current()) return;
      const notOffered = error instanceof BridgeError && (error.status === 404 || error.status === 501);
      set({ loading: false, error: notOffered ? null : errorMessage(error), notOffered });
    }
  },
}));
