import { create } from 'zustand';
import { errorMessage } from '../../bridge.js';
import { api } from '../../state/api.js';
import { onOrganisationChange } from '../../state/session.js';

/**
 * What each key has spent, from GET /admin/usage-throttling (the key list does not carry
 * it). Spend is extra: when it cannot be read (an older server, a refusal, a failure) the
 * column shows unknown and the rest of the screen works; the reason is kept for a tooltip.
 */

interface KeysState {
  /** Micro-PKR spent by key id; null until read, or when it could not be. */
  spent: Readonly<Record<string, number>> | null;
  spendError: string | null;
  loadSpend(): Promise<void>;
  reset(): void;
}

let generation = 0;

export const useKeysStore = create<KeysState>((set) => ({
  spent: null,
  spendError: null,
  async loadSpend() {
    // A reload started later wins over an earlier one still answering.
    const mine = ++generation;
    try {
      const { keys } = await api('api.usageThrottling', { query: {} });
      if (mine === generation)
        set({ spent: Object.fromEntries(keys.map((k) => [k.id, k.spent_cents])), spendError: null });
    } catch (error) {
      if (mine === generation) set({ spent: null, spendError: errorMessage(error) });
    }
  },
  reset() {
    generation++;
    set({ spent: null, spendError: null });
  },
}));

// Another profile or account: another organisation's keys.
onOrganisationChange(() => useKeysStore.getState().reset());
