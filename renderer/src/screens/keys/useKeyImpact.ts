import { useCallback, useEffect, useState } from 'react';
import type { CallResult } from '#contract';
import { BridgeError, errorMessage } from '../../bridge.js';
import { usePolling, useDocumentVisible } from '../../components/usePolling.js';
import { api } from '../../state/api.js';

export type KeyImpact = CallResult<'api.keyImpact'>;

export interface KeyImpactState {
  /** The figures last read (their `as_of` says when); null until read. */
  impact: KeyImpact | null;
  /** The last read failed: any figures above are from an earlier read, and say so. */
  error: string | null;
  /** The control plane has no impact endpoint (an older or remote one): the dialogs go on without it. */
  notOffered: boolean;
  /** The key is no longer active (revoked meanwhile, by someone else or elsewhere): nothing is read again. */
  gone: boolean;
}

const INITIAL: KeyImpactState = { impact: null, error: null, notOffered: false, gone: false };

/**
 * What depends on a key, read once when shown, and again every `liveEveryMs` while the
 * window is visible (the wait for callers to move) until the key is gone. A failed read
 * never blocks the action it informs, and never passes for a fresh one: it is said beside
 * the figures read before.
 */
export function useKeyImpact(keyId: string, liveEveryMs?: number): KeyImpactState {
  const [state, setState] = useState<KeyImpactState>(INITIAL);
  const read = useCallback(async () => {
    try {
      const impact = await api('api.keyImpact', { params: { key_id: keyId } });
      setState({ impact, error: null, notOffered: false, gone: false });
    } catch (error) {
      // The endpoint's own 404 concerns the key (field key_id); a server without the endpoint answers another.
      const refused = error instanceof BridgeError ? error : null;
      const gone = refused?.status === 404 && refused.field === 'key_id';
      const notOffered = refused !== null && (refused.status === 501 || (refused.status === 404 && !gone));
      setState((before) => ({ impact: before.impact, error: errorMessage(error), notOffered, gone }));
    }
  }, [keyId]);

  useEffect(() => {
    void read();
  }, [read]);
  const visible = useDocumentVisible();
  usePolling(read, {
    every: liveEveryMs ?? 0,
    active: liveEveryMs !== undefined && visible && !state.gone && !state.notOffered,
    since: () => Date.now(),
  });
  return state;
}
