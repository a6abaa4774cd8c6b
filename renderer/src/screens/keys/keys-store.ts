import { create } from 'zustand';
import { BridgeError, errorMessage } from '../../bridge.js';
import { api } from '../../state/api.js';
import { onOrganisationChange } from '../../state/session.js';

/**
 * What each key has spent, from GET /admin/usage-throttling (the key list does not carry
 * it). Spend is extra: when it cannot be read (an older server, a refusal, a failure) the
 * column shows unknown and the rest of the screen works; the screen says why above the table.
 */

interface KeysState {
  /** Micro-PKR spent by key id; null until read, or when it could not be. */
  spent: Readonly<Record<string, number>> | null;
  spendError: string | null;
  /** The server does not show spend to this account's role (403): an answer, not a failure. */
  spendRefused: boolean;
  loadSpend(): Promise<void>;
  reset(): void;
}

const EMPTY = { spent: null, spendError: null, spendRefused: false };

// Bumped by every read and by reset, which another organisation triggers: a read started
// later, or in the organisation shown now, wins over one still answering.
let generation = 0;

export const useKeysStore = create<KeysState>((set) => ({
  ...EMPTY,
  async loadSpend() {
    const mine = ++generation;
    try {
      const { keys } = await api('api.usageThrottling', { query: {} });
      if (mine === generation) set({ ...EMPTY, spent: Object.fromEntries(keys.map((k) => [k.id, k.spent_cents])) });
    } catch (error) {
      if (mine === generation)
        set({
          spent: null,
          spendError: errorMessage(error),
          spendRefused: error instanceof BridgeError && error.status === 403,
        });
    }
  },
  reset() {
    generation++;
    set(EMPTY);
  },
}));

// Another profile or account: another organisation's keys.
onOrganisationChange(() => useKeysStore.getState().reset());
