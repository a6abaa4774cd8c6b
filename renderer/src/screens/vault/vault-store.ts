import { create } from 'zustand';
import type { CallResult } from '../../../../main/core/contract.js';
import { errorMessage } from '../../bridge.js';
import { api } from '../../state/api.js';
import { onOrganisationChange, organisationToken } from '../../state/session.js';

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
  // Each takes the organisation's token before its call and drops the answer if the
  // console has changed organisation meanwhile: it belongs to the one shown before.
  async load() {
    const token = organisationToken();
    set({ loading: true });
    try {
      const { keys } = await api('api.listVaultKeys', {});
      if (token === organisationToken()) set({ keys: [...keys].sort(byProvider), error: null, loading: false });
    } catch (error) {
      if (token === organisationToken()) set({ error: errorMessage(error), loading: false });
    }
  },
  async store(provider, apiKey) {
    const token = organisationToken();
    const stored = await api('api.storeVaultKey', { body: { provider, api_key: apiKey } });
    if (token === organisationToken()) {
      const others = (get().keys ?? []).filter((k) => k.provider !== stored.provider);
      set({ keys: [...others, stored].sort(byProvider) });
    }
    return stored;
  },
  async remove(provider) {
    const token = organisationToken();
    try {
      await api('api.removeVaultKey', { params: { provider } });
    } catch (error) {
      // Already gone (another admin, another window): the list should say so too.
      if (token === organisationToken()) void get().load();
      throw error;
    }
    if (token === organisationToken()) set({ keys: (get().keys ?? []).filter((k) => k.provider !== provider) });
  },
  reset() {
    set({ keys: null, error: null, loading: false });
  },
}));

// Another profile or account: another organisation's vault.
onOrganisationChange(() => useVaultStore.getState().reset());
