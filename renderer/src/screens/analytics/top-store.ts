import type { CallArgs, CallResult } from '#contract';
import { BridgeError, errorMessage } from '../../bridge.js';
import { api } from '../../state/api.js';
import { latest, organisationStore } from '../../state/organisation-scope.js';

/**
 * The analytics screen's top keys, models or projects (GET /analytics/top, beyond the contract):
 * only the latest question's answer lands; a control plane without the endpoint (404) hides
 * the panel.
 */

export type Top = CallResult<'api.top'>;
export type TopQuery = CallArgs<'api.top'>['query'];

interface TopState {
  top: Top | null;
  /** The query `top` answers. */
  query: TopQuery | null;
  /** When (Date.now()) `top` was read; null while there is none. */
  at: number | null;
  loading: boolean;
  error: string | null;
  /** The server answered 503: its telemetry cannot be read (the shell's banner says so). */
  unavailable: boolean;
  notOffered: boolean;
  load(query: TopQuery, quietly?: boolean): Promise<void>;
}

const reads = latest();

export const useTop = organisationStore<TopState>()((set) => ({
  top: null,
  query: null,
  at: null,
  loading: false,
  error: null,
  unavailable: false,
  notOffered: false,
  async load(query, quietly = false) {
    const current = reads.ask();
    if (!quietly) set({ loading: true });
    try {
      const top = await api('api.top', { query });
      if (current())
        set({ top, query, at: Date.now(), loading: false, error: null, unavailable: false, notOffered: false });
    } catch (error) {
      if (!current()) return;
      const status = error instanceof BridgeError ? error.status : 0;
      const notOffered = status === 404 || status === 501;
      const unavailable = status === 503;
      set({ loading: false, error: notOffered || unavailable ? null : errorMessage(error), unavailable, notOffered });
    }
  },
}));
