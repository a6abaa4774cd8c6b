import { useSession } from '../../renderer/src/state/session.js';
import { bridge } from './fake-bridge.js';

/** A console starting on one remote profile nobody is signed in to: the sign-in screen's tests begin here. */
export function signedOutOnRemoteProfile(): void {
  useSession.setState({ phase: 'starting', profiles: [], profileId: null, me: null, embedded: null, notice: null });
  window.localStorage.clear();
  bridge.on('embedded.status', () => ({ state: 'stopped', baseUrl: null, lastLog: [], demoAccount: null }));
  bridge.on('profiles.list', () => ({
    profiles: [
      { id: 'p1', name: 'Production', kind: 'remote', baseUrl: 'https://gw.example.com/api', signedIn: false },
    ],
  }));
}
