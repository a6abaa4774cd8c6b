import type { CallResult } from '#contract';
import { BridgeError, errorMessage } from '../../bridge.js';
import { api } from '../../state/api.js';
import { latest, organisationStore } from '../../state/organisation-scope.js';

/**
 * Who may join the organisation by naming it (GET /organization/join-policy, beyond the
 * contract). Read-only here: only the operator's command changes it. Until it is read, or when
 * it cannot be (a failure, a control plane without the endpoint), the policy stays null and the
 * screen says it is unknown: the contract's default, open, would be a guess about this server.
 */

export type JoinPolicy = CallResult<'api.joinPolicy'>;

interface JoinPolicyState {
  policy: JoinPolicy | null;
  loading: boolean;
  error: string | null;
  /** The control plane has no such endpoint (404): nothing to try again. */
  notOffered: boolean;
  load(): Promise<void>;
}

const reads = latest();

export const useJoinPolicy = organisationStore<JoinPolicyState>()((set) => ({
  policy: null,
  loading: false,
  error: null,
  notOffered: false,

  async load() {
    const current = reads.ask();
    set({ loading: true, error: null, notOffered: false });
    try {
      const policy = await api('api.joinPolicy', {});
      if (current()) set({ policy, loading: false });
    } catch (error) {
      const notOffered = error instanceof BridgeError && error.status === 404;
      // A failed read shows unknown, even over a policy read before: it may have changed since.
      if (current()) set({ policy: null, loading: false, error: errorMessage(error), notOffered });
    }
  },
}));
