import { create } from 'zustand';
import type { CallResult } from '../../../../main/core/contract.js';
import { errorMessage } from '../../bridge.js';
import { api } from '../../state/api.js';
import { onOrganisationChange } from '../../state/session.js';

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
  reset(): void;
}

const byProvider = (a: VaultKey, b: VaultKey) => a.provider.localeCompare(b.provider);

export const useVaultStore = create<VaultState>((set, get) => ({
  keys: null,
  error: null,
  loading: false,
  async load() {
    set({ loading: true });
    try {
      const { keys } = await api('api.listVaultKeys', {});
      set({ keys: [...keys].sort(byProvider), error: null, loading: false });
    } catch (error) {
      set({ error: errorMessage(error), loading: false });
    }
  },
  async store(provider, apiKey) {
    const stored = await api('api.storeVaultKey', { body: { provider, api_key: apiKey } });
    const others = (get().keys ?? []).filter((k) => k.provider !== stored.provider);
    set({ keys: [...others, stored].sort(byProvider) });
    return stored;
  },
  async remove(provider) {
    try {
      await api('api.removeVaultKey', { params: { provider } });
    } catch (error) {
      // Already gone (another admin, another window): the list should say so too.
      void get().load();
      throw error;
    }
    set({ keys: (get().keys ?? []).filter((k) => k.provider !== provider) });
  },
  reset() {
    set({ keys: null, error: null, loading: false });
  },
}));

// Another profile or account: another organisation's vault.
onOrganisationChange(() => useVaultStore.getState().reset());
