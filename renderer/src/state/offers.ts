import { BridgeError } from '../bridge.js';
import { api } from './api.js';
import { organisationStore, thisOrganisation } from './organisation-scope.js';

/**
 * Which screens beyond the contract this control plane offers (decisions.md: the console keeps
 * working against one with only the contract's endpoints, hiding what it lacks). Asked once per
 * organisation shown; until answered, and after any failure but "no such endpoint", a screen is
 * offered (its own error then says what went wrong).
 */
interface Offers {
  /** GET /analytics/spend: false once it answered 404 or 501. */
  spend: boolean | null;
  probe(): Promise<void>;
  /**
   * The keys screen's rotate, bulk actions and impact (/keys/{id}/impact, /rotate, /bulk):
   * false once the impact of no key answered a 404 other than the key's own, or 501.
   */
  keySafety: boolean | null;
  probeKeySafety(): Promise<void>;
}

let asking: Promise<void> | null = null;
let askingKeys: Promise<void> | null = null;

/** No key has this id: a server with the endpoint refuses it as a key not found (field key_id). */
const NO_KEY = '00000000-0000-0000-0000-000000000000';

export const useOffers = organisationStore<Offers>()((set, get) => ({
  spend: null,
  keySafety: null,
  probeKeySafety() {
    if (get().keySafety !== null) return Promise.resolve();
    askingKeys ??= (async () => {
      const current = thisOrganisation();
      try {
        await api('api.keyImpact', { params: { key_id: NO_KEY } });
        if (current()) set({ keySafety: true });
      } catch (error) {
        if (!(error instanceof BridgeError) || !current()) return;
        // The route's own 404 names the key; a server without the route answers one that does not.
        if (error.status === 404) set({ keySafety: error.field === 'key_id' });
        else if (error.status === 501) set({ keySafety: false });
      } finally {
        askingKeys = null;
      }
    })();
    return askingKeys;
  },
  probe() {
    if (get().spend !== null) return Promise.resolve();
    // One question at a time (React runs a mounting effect twice in development).
    asking ??= (async () => {
      const current = thisOrganisation();
      try {
        await api('api.spend', { query: { limit: 1 } });
        if (current()) set({ spend: true });
      } catch (error) {
        const lacking = error instanceof BridgeError && (error.status === 404 || error.status === 501);
        if (current() && lacking) set({ spend: false });
      } finally {
        asking = null;
      }
    })();
    return asking;
  },
}));
