import type { CallResult } from '#contract';
import { errorMessage } from '../../bridge.js';
import { api } from '../../state/api.js';
import { latest, organisationStore, thisOrganisation } from '../../state/organisation-scope.js';

/**
 * The organisation's provider keys as the server describes them: provider, hint and dates.
 * The key itself is sent once and never held here; the server never returns it.
 */

export type VaultKey = CallResult<'api.listVaultKeys'>['keys'][number];

interface VaultState {
  /** Null until read. */
  keys: VaultKey[] | null;
  error: string | null;
  loading: boolean;
  load(): Promise<void>;
  /** Stores or rotates; throws the server's refusal for the form to show. */
  store(provider: string, apiKey: string): Promise<VaultKey>;
  /** Throws the server's refusal for the confirmation to show. */
  remove(provider: string): Promise<void>;
}

const byProvider = (a: VaultKey, b: VaultKey) => a.provider.localeCompare(b.provider);

const reads = latest();

export const useVaultStore = organisationStore<VaultState>()((set, get) => ({
  keys: null,
  error: null,
  loading: false,
  // An answer for the organisation shown before is dropped (and for the list, any but the
  // latest read's): it belongs to the one shown before.
  async load() {
    const current = reads.ask();
    set({ loading: true });
    try {
      const { keys } = await api('api.listVaultKeys', {});
      if (current()) set({ keys: [...keys].sort(byProvider), error: null, loading: false });
    } catch (error) {
      if (current()) set({ error: errorMessage(error), loading: false });
    }
  },
  async store(provider, apiKey) {
    const current = thisOrganisation();
    const stored = await api('api.storeVaultKey', { body: { provider, api_key: apiKey } });
    if (current()) {
      const others = (get().keys ?? []).filter((k) => k.provider !== stored.provider);
      set({ keys: [...others, stored].sort(byProvider) });
    }
    return stored;
  },
  async remove(provider) {
    const current = thisOrganisation();
    try {
      await api('api.removeVaultKey', { params: { provider } });
    } catch (error) {
      // Already gone (another admin, another window): the list should say so too.
      if (current()) void get().load();
      throw error;
    }
    if (current()) set({ keys: (get().keys ?? []).filter((k) => k.provider !== provider) });
  },
}));
