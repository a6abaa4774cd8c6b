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
}

let asking: Promise<void> | null = null;

export const useOffers = organisationStore<Offers>()((set, get) => ({
  spend: null,
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
