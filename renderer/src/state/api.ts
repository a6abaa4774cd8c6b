import { create } from 'zustand';
import type { CallArgs, CallName, CallResult } from '#contract';
import { BridgeError, call } from '../bridge.js';
import { useSession } from './session.js';

/**
 * Control-plane calls for the signed-in profile. A 401 ends the session on screen; a 503
 * from analytics raises the banner while the rest of the console keeps working.
 */

type ApiName = Extract<CallName, `api.${string}`>;
type ApiArgs<K extends ApiName> = Omit<CallArgs<K>, 'profileId'>;

const ANALYTICS_CALLS: readonly ApiName[] = [
  'api.summary',
  'api.timeseries',
  'api.requests',
  'api.top',
  'api.dashboard',
  'api.health',
];

interface AnalyticsHealth {
  /** The server's message while analytics answer 503; null when they last answered. */
  unavailable: string | null;
}

export const useAnalyticsHealth = create<AnalyticsHealth>(() => ({ unavailable: null }));

export async function api<K extends ApiName>(name: K, args: ApiArgs<K>): Promise<CallResult<K>> {
  const profileId = useSession.getState().profileId;
  if (!profileId) throw new BridgeError({ status: 401, message: 'not signed in' });
  const analytics = ANALYTICS_CALLS.includes(name);
  try {
    const result = await call(name, { ...args, profileId } as CallArgs<K>);
    if (analytics && useAnalyticsHealth.getState().unavailable) useAnalyticsHealth.setState({ unavailable: null });
    return result;
  } catch (error) {
    if (error instanceof BridgeError) {
      if (error.status === 401) useSession.getState().expired();
      if (analytics && error.status === 503) useAnalyticsHealth.setState({ unavailable: error.message });
    }
    throw error;
  }
}
