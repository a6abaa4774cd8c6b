import { useEffect, useState } from 'react';
import { ErrorNote } from '../../components/Feedback.js';
import { useSession } from '../../state/session.js';
import { ThemeSwitch } from '../../theme/ThemeSwitch.js';
import { EmbeddedPanel } from './EmbeddedPanel.js';
import { ProfileList } from './ProfileList.js';
import { SignInPanel } from './SignInPanel.js';

const POLL_MS = 1500;
/** While the embedded server starts, the host is asked often: a new user waits on this answer. */
const STARTING_POLL_MS = 100;

/** Choose a connection, then sign in, register or use the demo. */
export function ConnectScreen() {
  const profiles = useSession((s) => s.profiles);
  const profileId = useSession((s) => s.profileId);
  const notice = useSession((s) => s.notice);
  const setNotice = useSession((s) => s.setNotice);
  const pollEmbedded = useSession((s) => s.pollEmbedded);
  const profile = profiles.find((p) => p.id === profileId) ?? null;
  const [adding, setAdding] = useState(profiles.length === 0);

  const starting = useSession((s) => !s.embedded || s.embedded.state === 'starting');
  useEffect(() => {
    void pollEmbedded();
    const timer = window.setInterval(() => void pollEmbedded(), starting ? STARTING_POLL_MS : POLL_MS);
    return () => window.clearInterval(timer);
  }, [pollEmbedded, starting]);

  return (
    <main className="connect" data-testid="connect-screen">
      <header className="connect-header">
        <h1>Gateway Console</h1>
        <p className="muted">Choose a control plane to manage, then sign in.</p>
        <ThemeSwitch />
      </header>
      {notice && (
        <div role="alert" className="notice" data-testid="session-notice">
          {notice}{' '}
          <button type="button" className="link" onClick={() => setNotice(null)}>
            Dismiss
          </button>
        </div>
      )}
      <div className="connect-columns">
        <ProfileList adding={adding} onAdding={setAdding} />
        <section className="panel" aria-labelledby="signin-heading">
          {profile ? (
            <>
              <h2 id="signin-heading">{profile.name}</h2>
              <p className="muted" data-testid="profile-address">
                {profile.kind === 'embedded' ? 'The embedded server on this computer' : profile.baseUrl}
              </p>
              {profile.kind === 'embedded' && <EmbeddedPanel profileId={profile.id} />}
              <SignInPanel key={profile.id} profile={profile} />
            </>
          ) : (
            <>
              <h2 id="signin-heading">No connection chosen</h2>
              <ErrorNote error={profiles.length === 0 ? 'Add a connection to begin.' : null} />
            </>
          )}
        </section>
      </div>
    </main>
  );
}
