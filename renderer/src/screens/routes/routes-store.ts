import type { CallResult } from '#contract';
import { BridgeError, errorMessage } from '../../bridge.js';
import { api } from '../../state/api.js';
import { latest, organisationStore } from '../../state/organisation-scope.js';

/**
 * The routes document and each target's live state, as GET /routes gives it (beyond the
 * contract). A control plane without the endpoint answers 404: the screen then says so.
 */

export type RoutesView = CallResult<'api.routes'>;
export type RouteView = RoutesView['routes'][number];
export type RouteTargetView = RouteView['targets'][number];
export type TargetState = NonNullable<RouteTargetView['state']>;

interface RoutesState {
  routes: RoutesView | null;
  loading: boolean;
  error: string | null;
  notOffered: boolean;
  /** When (Date.now()) the figures on screen were asked for, for polling. */
  askedAt: number | null;
  /** `quietly` (a background refresh) leaves the screen as it is meanwhile. */
  load(quietly?: boolean): Promise<void>;
}

const reads = latest();

export const useRoutesStore = organisationStore<RoutesState>()((set) => ({
  routes: null,
  loading: false,
  error: null,
  notOffered: false,
  askedAt: null,
  async load(quietly = false) {
    const current = reads.ask();
    set(quietly ? { askedAt: Date.now() } : { loading: true, askedAt: Date.now() });
    try {
      const routes = await api('api.routes', {});
      if (current()) set({ routes, loading: false, error: null, notOffered: false });
    } catch (error) {
      if (!current()) return;
      const notOffered = error instanceof BridgeError && (error.status === 404 || error.status === 501);
      set({ loading: false, error: notOffered ? null : errorMessage(error), notOffered });
    }
  },
}));
