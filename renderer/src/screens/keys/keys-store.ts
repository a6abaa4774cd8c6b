import { BridgeError, errorMessage } from '../../bridge.js';
import { api } from '../../state/api.js';
import { latest, organisationStore } from '../../state/organisation-scope.js';

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
}

const EMPTY = { spent: null, spendError: null, spendRefused: false };

// A read started later, or in the organisation shown now, wins over one still answering.
const reads = latest();

export const useKeysStore = organisationStore<KeysState>()((set) => ({
  ...EMPTY,
  async loadSpend() {
    const current = reads.ask();
    try {
      const { keys } = await api('api.usageThrottling', { query: {} });
      if (current()) set({ ...EMPTY, spent: Object.fromEntries(keys.map((k) => [k.id, k.spent_cents])) });
    } catch (error) {
      if (current())
        set({
          spent: null,
          spendError: errorMessage(error),
          spendRefused: error instanceof BridgeError && error.status === 403,
        });
    }
  },
}));
