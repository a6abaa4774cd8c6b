import { errorMessage } from '../../bridge.js';
import { api } from '../../state/api.js';
import { organisationStore, thisOrganisation } from '../../state/organisation-scope.js';

/**
 * "Verify": the server recomputes the organisation's hash chain stretch by stretch (each
 * request a bounded amount of hashing), this store asking for the next stretch from the last
 * place checked until the end or the first event that does not match.
 */

export type ChainBreak = NonNullable<Awaited<ReturnType<typeof verifyStretch>>['broken']>;

const verifyStretch = (after: number) => api('api.verifyActivity', { query: { after } });

interface VerifyState {
  status: 'idle' | 'running' | 'holds' | 'broken' | 'failed';
  checked: number;
  total: number | null;
  headHash: string | null;
  broken: ChainBreak | null;
  error: string | null;
  run(): Promise<void>;
}

const IDLE = {
  status: 'idle' as const,
  checked: 0,
  total: null,
  headHash: null,
  broken: null,
  error: null,
};

export const useVerify = organisationStore<VerifyState>()((set, get) => ({
  ...IDLE,
  async run() {
    if (get().status === 'running') return;
    const current = thisOrganisation();
    set({ ...IDLE, status: 'running' });
    try {
      let after = 0;
      let checked = 0;
      for (;;) {
        const stretch = await verifyStretch(after);
        if (!current()) return;
        checked += stretch.checked;
        set({ checked, total: stretch.total });
        if (stretch.broken) {
          set({ status: 'broken', broken: stretch.broken });
          return;
        }
        if (stretch.done) {
          set({ status: 'holds', headHash: stretch.head_hash });
          return;
        }
        after = stretch.last_position;
      }
    } catch (error) {
      if (!current()) return;
      set({ status: 'failed', error: errorMessage(error) });
    }
  },
}));
