import type { CallArgs, CallResult } from '#contract';
import { BridgeError } from '../../bridge.js';
import { api } from '../../state/api.js';
import { latest, organisationStore } from '../../state/organisation-scope.js';

/**
 * The summary's figures beside those of the window just before (GET /analytics/compare, beyond
 * the contract), for the cards' "vs before". Without the endpoint, or while it fails, the cards
 * simply show no comparison: the summary itself says what went wrong.
 */

export type Compare = CallResult<'api.compare'>;
export type CompareQuery = CallArgs<'api.compare'>['query'];

interface CompareState {
  compare: Compare | null;
  /** The query `compare` answers: a comparison is shown only beside the summary of the same. */
  query: CompareQuery | null;
  load(query: CompareQuery): Promise<void>;
}

const reads = latest();

export const useCompare = organisationStore<CompareState>()((set) => ({
  compare: null,
  query: null,
  async load(query) {
    const current = reads.ask();
    try {
      const compare = await api('api.compare', { query });
      if (current()) set({ compare, query });
    } catch (error) {
      if (!(error instanceof BridgeError)) throw error;
      if (current()) set({ compare: null, query: null });
    }
  },
}));
