import { useEffect } from 'react';
import { Loading } from '../components/Feedback.js';
import { ConnectScreen } from '../screens/connect/ConnectScreen.js';
import { useSession } from '../state/session.js';
import { Shell } from './Shell.js';

export function App() {
  const phase = useSession((s) => s.phase);
  const load = useSession((s) => s.load);
  useEffect(() => {
    void load();
  }, [load]);

  if (phase === 'starting') return <Loading>Starting the console…</Loading>;
  if (phase === 'connect') return <ConnectScreen />;
  return <Shell />;
}
