import { useEffect } from 'react';
import { formatCount } from '../lib/format.js';
import { useSession } from '../state/session.js';
import type { EmbeddedStatus } from '#contract';

const POLL_MS = 1_000;

type History = NonNullable<EmbeddedStatus['demoHistory']>;

/** Still being written: neither whole nor stopped short. */
const writing = (history: History | undefined): history is History =>
  history !== undefined && history.failed === undefined && history.rows < history.of;

/**
 * On the embedded demo's first launch its history is written while the console is in use: how
 * far it is, so that a sparse chart reads as "still filling", not as the demo's whole story.
 */
export function DemoHistoryProgress({ history }: { history: History }) {
  if (history.failed !== undefined) {
    return (
      <p role="alert" className="error" data-testid="demo-history">
        The demo's history stopped short at {formatCount(history.rows)} of {formatCount(history.of)} requests:{' '}
        {history.failed}
      </p>
    );
  }
  if (!writing(history)) return null;
  return (
    <p className="muted demo-history" data-testid="demo-history">
      <label>
        Writing the demo's history, newest first: {formatCount(history.rows)} of {formatCount(history.of)} requests;
        figures fill in as it lands. <progress value={history.rows} max={history.of} />
      </label>
    </p>
  );
}

/** The note above a signed-in screen of the embedded profile, asked of the host while it changes. */
export function DemoHistoryNote() {
  const embeddedProfile = useSession((s) => s.profiles.find((p) => p.id === s.profileId)?.kind === 'embedded');
  const history = useSession((s) => s.embedded?.demoHistory);
  const poll = useSession((s) => s.pollEmbedded);
  const asking = embeddedProfile && (history === undefined || writing(history));
  useEffect(() => {
    if (!asking) return;
    void poll();
    const timer = window.setInterval(() => void poll(), POLL_MS);
    return () => window.clearInterval(timer);
  }, [asking, poll]);
  return embeddedProfile && history ? <DemoHistoryProgress history={history} /> : null;
}
