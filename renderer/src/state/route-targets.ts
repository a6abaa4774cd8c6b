import type { CallResult } from '#contract';
import { BridgeError, errorMessage } from '../bridge.js';
import { api } from './api.js';
import { latest, organisationStore } from './organisation-scope.js';

/**
 * The route targets (`provider/model`) of the routes document's current version, as GET /routes
 * lists them: the choices of the analytics', health's and request log's Target filter. Read once
 * per organisation, like the directory's lists (the Routes screen keeps its own, live figures).
 * A control plane without /routes (404 or 501) has no targets to offer: the filter hides.
 */

type Routes = CallResult<'api.routes'>;

/** Every target of every route, once each, by name. */
export function targetsOf(routes: Routes): string[] {
  const names = routes.routes.flatMap((route) => route.targets.map((t) => `${t.provider}/${t.model}`));
  return [...new Set(names)].sort((a, b) => a.localeCompare(b));
}

interface RouteTargetsState {
  /** Null until read (or while the read failed). */
  targets: string[] | null;
  loading: boolean;
  error: string | null;
  notOffered: boolean;
  /** Reads the targets unless they are known or on their way (every filter calls it on mount). */
  load(): Promise<void>;
}

const reads = latest();

export const useRouteTargets = organisationStore<RouteTargetsState>()((set, get) => ({
  targets: null,
  loading: false,
  error: null,
  notOffered: false,
  async load() {
    const s = get();
    if (s.targets !== null || s.loading || s.notOffered) return;
    const current = reads.ask();
    set({ loading: true, error: null });
    try {
      const routes = await api('api.routes', {});
      if (current()) set({ targets: targetsOf(routes), loading: false });
    } catch (error) {
      if (!current()) return;
      const notOffered = error instanceof BridgeError && (error.status === 404 || error.status === 501);
      set({ loading: false, error: notOffered ? null : errorMessage(error), notOffered });
    }
  },
}));
