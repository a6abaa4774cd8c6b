import { BridgeError, errorMessage } from '../../bridge.js';
import { api } from '../../state/api.js';
import { latest, organisationStore } from '../../state/organisation-scope.js';
import type { Price } from './request-picture.js';

/**
 * The models' prices (GET /models/prices, beyond the contract), read once per connection when
 * a request's detail first needs them. A control plane without the endpoint (404) gives no
 * prices: the detail then says why it cannot split a cost, and asks nothing again.
 */

export type Prices =
  | { kind: 'idle' }
  | { kind: 'loading' }
  | { kind: 'ready'; byModel: ReadonlyMap<string, Price>; byokShare: number }
  | { kind: 'not-offered' }
  | { kind: 'failed'; error: string };

interface ModelPricesState {
  prices: Prices;
  /** Reads the prices unless they are read or on their way (`force`: again, after a failure). */
  load(force?: boolean): Promise<void>;
}

const reads = latest();

export const useModelPrices = organisationStore<ModelPricesState>()((set, get) => ({
  prices: { kind: 'idle' },

  async load(force = false) {
    const { kind } = get().prices;
    if (!force && kind !== 'idle') return;
    const current = reads.ask();
    set({ prices: { kind: 'loading' } });
    try {
      const answer = await api('api.modelPrices', {});
      const byModel = new Map<string, Price>(answer.prices.map(({ model, ...price }) => [model, price]));
      if (current()) set({ prices: { kind: 'ready', byModel, byokShare: answer.byok_service_share } });
    } catch (error) {
      if (!current()) return;
      const notOffered = error instanceof BridgeError && (error.status === 404 || error.status === 501);
      set({ prices: notOffered ? { kind: 'not-offered' } : { kind: 'failed', error: errorMessage(error) } });
    }
  },
}));
