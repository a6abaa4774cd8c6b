import { useEffect, useRef } from 'react';
import { organisationStore } from '../state/organisation-scope.js';

/**
 * What a command asks of a screen it has just opened: the keys screen's "New key" dialog, the
 * provider keys' "Add". The command opens the screen and leaves the intent here; the screen,
 * once shown, takes it and acts as if its own button were pressed. Forgotten when the
 * organisation changes: an intent never runs in another organisation than it was asked in.
 */

export type Intent = 'createKey' | 'storeProviderKey';

interface IntentState {
  pending: Intent | null;
  ask(intent: Intent): void;
}

export const useIntents = organisationStore<IntentState>()((set) => ({
  pending: null,
  ask: (intent) => set({ pending: intent }),
}));

/** In a screen: runs `act` when the intent is asked for (now, or while the screen is shown). */
export function useIntent(intent: Intent, act: () => void): void {
  const pending = useIntents((s) => s.pending === intent);
  const latestAct = useRef(act);
  latestAct.current = act;
  useEffect(() => {
    if (!pending) return;
    useIntents.setState({ pending: null });
    latestAct.current();
  }, [pending]);
}
