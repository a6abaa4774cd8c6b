import type { CallArgs, CallResult } from '#contract';
import { BridgeError, errorMessage } from '../../../bridge.js';
import { api } from '../../../state/api.js';
import { latest, organisationStore } from '../../../state/organisation-scope.js';

/**
 * The analytics screen's dashboard (GET /analytics/dashboard, beyond the contract): its time
 * series in buckets of the organisation's reporting zone, and the prompt cache by model.
 *
 * Like the summary and the chart: the last answer stays, marked as loading, while the next is
 * on its way; only the latest question's answer lands (a slow older one is dropped); a quiet
 * background re-read (auto-refresh, a revisit) sets no loading state and, if it fails, keeps the figures
 * it would have replaced. A control plane without the endpoint (404 or 501) hides the panels.
 */

export type Dashboard = CallResult<'api.dashboard'>;
export type DashboardQuery = CallArgs<'api.dashboard'>['query'];

interface DashboardState {
  data: Dashboard | null;
  /** The query `data` answers. */
  query: DashboardQuery | null;
  loading: boolean;
  error: string | null;
  /** The server answered 503: its telemetry cannot be read (the shell's banner says so). */
  unavailable: boolean;
  /** The control plane has no such endpoint (404 or 501): the panels do not show. */
  notOffered: boolean;
  /** When (Date.now()) `data` was read; null while there is none. */
  at: number | null;
  load(query: DashboardQuery, quiet?: boolean): Promise<void>;
}

const reads = latest();

export const useDashboard = organisationStore<DashboardState>()((set) => ({
  data: null,
  query: null,
  loading: false,
  error: null,
  unavailable: false,
  notOffered: false,
  at: null,
  async load(query, quiet = false) {
    const current = reads.ask();
    if (!quiet) set({ loading: true, error: null, unavailable: false });
    try {
      const data = await api('api.dashboard', { query });
      if (!current()) return;
      set({ data, query, loading: false, error: null, unavailable: false, notOffered: false, at: Date.now() });
    } catch (error) {
      if (!current()) return;
      const status = error instanceof BridgeError ? error.status : 0;
      const notOffered = status === 404 || status === 501;
      const unavailable = status === 503;
      set((s) => {
        // A background re-read of the figures on screen keeps them (and when they were read).
        const keep = quiet && !notOffered && JSON.stringify(s.query) === JSON.stringify(query);
        return {
          data: keep ? s.data : null,
          at: keep ? s.at : null,
          query,
          loading: false,
          error: notOffered || unavailable ? null : errorMessage(error),
          unavailable,
          notOffered,
        };
      });
    }
  },
}));
