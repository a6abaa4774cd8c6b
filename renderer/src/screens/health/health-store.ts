import type { CallArgs, CallResult } from '#contract';
import { BridgeError, errorMessage } from '../../bridge.js';
import { api } from '../../state/api.js';
import { latest, organisationStore } from '../../state/organisation-scope.js';

/**
 * Provider and model health as GET /analytics/health gives it (beyond the contract). A control
 * plane without the endpoint answers 404: the screen then says it is not offered.
 */

export type Health = CallResult<'api.health'>;
export type ProviderHealth = Health['providers'][number];
export type ModelHealth = ProviderHealth['models'][number];
export type HealthFigures = Omit<ModelHealth, 'model'>;
export type HealthStatus = HealthFigures['status'];
export type HealthWindow = '1h' | '24h';
export type HealthQuery = NonNullable<CallArgs<'api.health'>['query']>;

/** What `load` asks for the window ending now (`to` null) or at `to`, of every target or one (`provider/model`). */
export function healthQuery(window: HealthWindow, to: string | null, target: string | null = null): HealthQuery {
  return { window, ...(to === null ? {} : { to }), ...(target === null ? {} : { target }) };
}

interface HealthState {
  health: Health | null;
  loading: boolean;
  error: string | null;
  notOffered: boolean;
  /** The query (as JSON) `health` answers, and when (Date.now()) it was read. */
  answered: string | null;
  at: number | null;
  /** When the figures on screen were asked for (Date.now()), for polling. */
  askedAt: number | null;
  /**
   * Reads the window ending now, or at `to` (an ISO instant) for one in the past, of the requests
   * `target` served (null: all of them); `quietly` (a background refresh) leaves the screen as it is meanwhile.
   */
  load(window: HealthWindow, to: string | null, target: string | null, quietly?: boolean): Promise<void>;
}

const reads = latest();

export const useHealthStore = organisationStore<HealthState>()((set) => ({
  health: null,
  loading: false,
  error: null,
  notOffered: false,
  answered: null,
  at: null,
  askedAt: null,
  async load(window, to, target, quietly = false) {
    const current = reads.ask();
    set(quietly ? { askedAt: Date.now() } : { loading: true, askedAt: Date.now() });
    try {
      const query = healthQuery(window, to, target);
      const health = await api('api.health', { query });
      if (current())
        set({
          health,
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
