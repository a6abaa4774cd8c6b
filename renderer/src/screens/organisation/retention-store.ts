import type { CallResult } from '#contract';
import { BridgeError, errorMessage } from '../../bridge.js';
import { api } from '../../state/api.js';
import { refusal } from './role-refusal.js';
import { latest, organisationStore, thisOrganisation } from '../../state/organisation-scope.js';
import type { Me } from '../../state/session.js';

/**
 * How long the organisation's request-log rows are kept (GET and PUT /organization/retention,
 * beyond the contract): the platform's retention, the organisation's own shorter one, and the
 * instant from which rows are kept. A control plane without the endpoint (404) has no such
 * setting, and the screen shows nothing of it.
 */

export type Retention = CallResult<'api.retention'>;

/** Owners and admins change the retention, as they change the reporting zone; members read it. */
export function canChangeRetention(role: Me['role']): boolean {
  return role === 'owner' || role === 'admin';
}

interface RetentionState {
  retention: Retention | null;
  loading: boolean;
  error: string | null;
  /** The control plane has no such endpoint (404): nothing to show or try again. */
  notOffered: boolean;
  saving: boolean;
  /** The refusal of the last change, for the days field. */
  saveError: string | null;
  /** What the last successful change left, for the confirmation. */
  saved: Retention | null;
  load(): Promise<void>;
  /** Resolves true when the server took the days (null: as long as the platform keeps rows). */
  save(days: number | null): Promise<boolean>;
  clearSave(): void;
}

const reads = latest();

export const useRetention = organisationStore<RetentionState>()((set) => ({
  retention: null,
  loading: false,
  error: null,
  notOffered: false,
  saving: false,
  saveError: null,
  saved: null,

  async load() {
    const current = reads.ask();
    set({ loading: true, error: null });
    try {
      const retention = await api('api.retention', {});
      if (current()) set({ retention, loading: false, notOffered: false });
    } catch (error) {
      const notOffered = error instanceof BridgeError && error.status === 404;
      // A failed read shows unknown, even over one read before: it may have changed since.
      if (current())
        set({ retention: null, loading: false, error: notOffered ? null : errorMessage(error), notOffered });
    }
  },

  async save(days) {
    const current = thisOrganisation();
    set({ saving: true, saveError: null, saved: null });
    try {
      const retention = await api('api.setRetention', { body: { days } });
      if (!current()) return false;
      // The setting saved is newer than any read still on its way.
      reads.ask();
      set({ retention, saving: false, saved: retention, loading: false, error: null });
      return true;
    } catch (error) {
      if (current()) set({ saving: false, saveError: refusal(error) });
      return false;
    }
  },

  clearSave() {
    set({ saveError: null, saved: null });
  },
}));
