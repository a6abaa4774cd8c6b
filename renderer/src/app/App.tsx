import { useEffect } from 'react';
import { Loading } from '../components/Feedback.js';
import { ConnectScreen } from '../screens/connect/ConnectScreen.js';
import { useRoute } from '../state/route.js';
import { useSession } from '../state/session.js';
import { LoadBoundary } from './LoadBoundary.js';
import { retryableLazy } from './retryable-lazy.js';
import { screens } from './screens.js';

// The signed-in console is a chunk of its own: the sign-in page loads none of it.
const shell = retryableLazy(() => import('./Shell.js'), 'Shell');

export function App() {
  const phase = useSession((s) => s.phase);
  const load = useSession((s) => s.load);
  useEffect(() => {
    void load();
  }, [load]);
  // Fetched once the sign-in page has painted and the browser idles, so signing in waits for no
  // download: the console's chunk and the chunks of the screen it opens on (Analytics brings the
  // charts), again for another screen if the address changes meanwhile.
  useEffect(() => {
    if (phase !== 'connect') return;
    const fetchLanding = () => {
      void shell.preload().catch(() => {});
      void screens[useRoute.getState().screen].preload().catch(() => {});
    };
    const idle = typeof window.requestIdleCallback === 'function';
    const handle = idle ? window.requestIdleCallback(fetchLanding) : window.setTimeout(fetchLanding, 200);
    const unsubscribe = useRoute.subscribe((route, previous) => {
      if (route.screen !== previous.screen) fetchLanding();
    });
    return () => {
      unsubscribe();
      if (idle) window.cancelIdleCallback(handle);
      else window.clearTimeout(handle);
    };
  }, [phase]);

  if (phase === 'starting') return <Loading>Starting the console…</Loading>;
  if (phase === 'connect') return <ConnectScreen />;
  return (
    <LoadBoundary title="the console" retry={shell.retry}>
      {() => <shell.component />}
    </LoadBoundary>
  );
}
