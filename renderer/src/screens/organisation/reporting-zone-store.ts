import type { CallResult } from '#contract';
import { BridgeError, errorMessage } from '../../bridge.js';
import { api } from '../../state/api.js';
import { refusal } from './role-refusal.js';
import { latest, organisationStore, thisOrganisation } from '../../state/organisation-scope.js';
import type { Me } from '../../state/session.js';

/**
 * The organisation's reporting time zone (GET and PUT /organization/reporting-zone, beyond the
 * contract): the zone the dashboard counts its days and weeks in. A control plane without the
 * endpoint (404) has no such setting, and the screen shows nothing of it.
 */

export type ReportingZone = CallResult<'api.reportingZone'>;

/** Owners and admins change the zone, as they rename; members read it. */
export function canChangeZone(role: Me['role']): boolean {
  return role === 'owner' || role === 'admin';
}

/**
 * The zones to suggest: the runtime's IANA names, with UTC, which some runtimes list only
 * under an alias or not at all. The server decides what it accepts.
 */
export function zoneSuggestions(): string[] {
  const listed = typeof Intl.supportedValuesOf === 'function' ? Intl.supportedValuesOf('timeZone') : [];
  return ['UTC', ...listed.filter((zone) => zone !== 'UTC')];
}

interface ReportingZoneState {
  zone: ReportingZone | null;
  loading: boolean;
  error: string | null;
  /** The control plane has no such endpoint (404): nothing to show or try again. */
  notOffered: boolean;
  saving: boolean;
  /** The server's refusal of the last change, for the zone field. */
  saveError: string | null;
  /** The zone the last successful change set, as the server spells it, for the confirmation. */
  savedTo: string | null;
  load(): Promise<void>;
  /** Resolves true when the server took the zone. */
  save(timeZone: string): Promise<boolean>;
  clearSave(): void;
}

const reads = latest();

export const useReportingZone = organisationStore<ReportingZoneState>()((set) => ({
  zone: null,
  loading: false,
  error: null,
  notOffered: false,
  saving: false,
  saveError: null,
  savedTo: null,

  async load() {
    const current = reads.ask();
    set({ loading: true, error: null });
    try {
      const zone = await api('api.reportingZone', {});
      if (current()) set({ zone, loading: false, notOffered: false });
    } catch (error) {
      const notOffered = error instanceof BridgeError && error.status === 404;
      // A failed read shows unknown, even over a zone read before: it may have changed since.
      if (current()) set({ zone: null, loading: false, error: notOffered ? null : errorMessage(error), notOffered });
    }
  },

  async save(timeZone) {
    const current = thisOrganisation();
    set({ saving: true, saveError: null, savedTo: null });
    try {
      const zone = await api('api.setReportingZone', { body: { time_zone: timeZone } });
      if (!current()) return false;
      // The zone saved is newer than any read still on its way.
      reads.ask();
      set({ zone, saving: false, savedTo: zone.time_zone, loading: false, error: null });
      return true;
    } catch (error) {
      if (current()) set({ saving: false, saveError: refusal(error) });
      return false;
    }
  },

  clearSave() {
    set({ saveError: null, savedTo: null });
  },
}));
