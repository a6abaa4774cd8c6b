import type { AlertsView, CallArgs } from '#contract';
import { call, errorMessage } from '../../bridge.js';
import { organisationStore, thisOrganisation } from '../../state/organisation-scope.js';
import { useSession } from '../../state/session.js';

/**
 * The signed-in profile's alert rules and what they fired, as the host keeps them (the host
 * checks the rules; this side shows them, edits them and, in the web shell, raises the
 * browser's notifications for what fired).
 */

export type AlertRule = CallArgs<'alerts.setRules'>['rules'][number];
export type FiredAlert = AlertsView['fired'][number];

interface AlertsState {
  view: AlertsView | null;
  error: string | null;
  busy: boolean;
  load(): Promise<AlertsView | null>;
  save(rules: AlertRule[]): Promise<void>;
  checkNow(): Promise<void>;
}

function profileId(): string {
  const id = useSession.getState().profileId;
  if (!id) throw new Error('not signed in');
  return id;
}

export const useAlerts = organisationStore<AlertsState>()((set) => {
  // Every answer replaces the view, if it is still this organisation's; only a change (a save,
  // a check) holds the buttons meanwhile, so the feed's reads never free them early.
  const run = async (ask: () => Promise<AlertsView>, change: boolean) => {
    const current = thisOrganisation();
    try {
      const view = await ask();
      if (current()) set(change ? { view, error: null, busy: false } : { view, error: null });
      return view;
    } catch (error) {
      if (current()) set(change ? { error: errorMessage(error), busy: false } : { error: errorMessage(error) });
      if (change) throw error;
      return null;
    }
  };
  return {
    view: null,
    error: null,
    busy: false,
    load: () => run(() => call('alerts.get', { profileId: profileId() }), false),
    async save(rules) {
      set({ busy: true });
      await run(() => call('alerts.setRules', { profileId: profileId(), rules }), true);
    },
    async checkNow() {
      set({ busy: true });
      await run(() => call('alerts.check', { profileId: profileId() }), true).catch(() => undefined);
    },
  };
});
