import { StrictMode, useCallback, useEffect, useState } from 'react';
import { createRoot } from 'react-dom/client';
import type { CallResult, EmbeddedStatus, ProfileView } from '../../main/core/contract.js';
import { call, errorMessage } from './bridge.js';
import './styles.css';

/**
 * A placeholder console: enough to see the host, the embedded server and a signed-in
 * session working end to end. The real screens come later.
 */

type Me = CallResult<'session.me'>;
type Info = CallResult<'app.info'>;

const POLL_MS = 2000;

function App() {
  const [info, setInfo] = useState<Info | null>(null);
  const [status, setStatus] = useState<EmbeddedStatus | null>(null);
  const [profiles, setProfiles] = useState<ProfileView[]>([]);
  const [error, setError] = useState<string | null>(null);

  const refreshProfiles = useCallback(async () => {
    try {
      setProfiles((await call('profiles.list', {})).profiles);
    } catch (e) {
      setError(errorMessage(e));
    }
  }, []);

  useEffect(() => {
    call('app.info', {}).then(setInfo, (e: unknown) => setError(errorMessage(e)));
    void refreshProfiles();
  }, [refreshProfiles]);

  useEffect(() => {
    let stopped = false;
    const poll = async () => {
      try {
        const next = await call('embedded.status', {});
        if (!stopped) setStatus(next);
      } catch (e) {
        if (!stopped) setError(errorMessage(e));
      }
    };
    void poll();
    const timer = window.setInterval(() => void poll(), POLL_MS);
    return () => {
      stopped = true;
      window.clearInterval(timer);
    };
  }, []);

  const restart = async () => {
    setError(null);
    setStatus((current) => (current ? { ...current, state: 'starting' } : current));
    try {
      setStatus(await call('embedded.restart', {}));
    } catch (e) {
      setError(errorMessage(e));
    }
  };

  return (
    <main className="console" data-testid="console">
      <header>
        <h1>Gateway Console</h1>
        <p className="muted" data-testid="app-info">
          {info ? `${info.shell === 'web' ? 'Web shell' : 'Electron shell'} · version ${info.version}` : 'Connecting…'}
        </p>
      </header>

      {error && (
        <p role="alert" className="error" data-testid="error">
          {error}{' '}
          <button type="button" onClick={() => setError(null)}>
            Dismiss
          </button>
        </p>
      )}

      <EmbeddedPanel status={status} onRestart={restart} />

      <section aria-labelledby="profiles-heading">
        <h2 id="profiles-heading">Connection profiles</h2>
        {profiles.length === 0 ? (
          <p className="muted">No connection profiles yet.</p>
        ) : (
          <ul className="profiles" data-testid="profiles">
            {profiles.map((profile) => (
              <ProfileItem
                key={profile.id}
                profile={profile}
                demoAccount={profile.kind === 'embedded' ? (status?.demoAccount ?? null) : null}
                embeddedRunning={status?.state === 'running'}
                onChanged={refreshProfiles}
                onError={setError}
              />
            ))}
          </ul>
        )}
      </section>
    </main>
  );
}

function EmbeddedPanel({ status, onRestart }: { status: EmbeddedStatus | null; onRestart: () => Promise<void> }) {
  return (
    <section aria-labelledby="embedded-heading">
      <h2 id="embedded-heading">Embedded server</h2>
      {!status ? (
        <p className="muted">Asking the host…</p>
      ) : (
        <>
          <p data-testid="embedded-state" aria-live="polite">
            Status: <strong className={`state state-${status.state}`}>{status.state}</strong>
            {status.baseUrl && status.state === 'running' && <span className="muted"> at {status.baseUrl}</span>}
          </p>
          {status.state === 'crashed' && (
            <div role="alert" data-testid="embedded-crash">
              <p>The embedded server stopped unexpectedly. Its last log lines:</p>
              <pre className="log">{status.lastLog.length ? status.lastLog.join('\n') : '(no output)'}</pre>
            </div>
          )}
          {(status.state === 'crashed' || status.state === 'stopped') && (
            <button type="button" onClick={() => void onRestart()} data-testid="embedded-restart">
              Restart the embedded server
            </button>
          )}
        </>
      )}
    </section>
  );
}

interface ProfileItemProps {
  profile: ProfileView;
  demoAccount: EmbeddedStatus['demoAccount'];
  embeddedRunning: boolean;
  onChanged: () => Promise<void>;
  onError: (message: string | null) => void;
}

function ProfileItem({ profile, demoAccount, embeddedRunning, onChanged, onError }: ProfileItemProps) {
  const [me, setMe] = useState<Me | null>(null);
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    if (!profile.signedIn) {
      setMe(null);
      return;
    }
    // The embedded profile's server may still be starting; the host waits for it.
    if (profile.kind === 'embedded' && !embeddedRunning) return;
    let stale = false;
    call('session.me', { profileId: profile.id }).then(
      (next) => {
        if (!stale) setMe(next);
      },
      (e: unknown) => {
        if (!stale) onError(errorMessage(e));
      },
    );
    return () => {
      stale = true;
    };
  }, [profile.id, profile.kind, profile.signedIn, embeddedRunning, onError]);

  const act = async (action: () => Promise<unknown>) => {
    setBusy(true);
    onError(null);
    try {
      await action();
    } catch (e) {
      onError(errorMessage(e));
    } finally {
      setBusy(false);
      await onChanged();
    }
  };

  const signInAsDemo = () => act(() => call('session.signInDemo', { profileId: profile.id }));
  const signOut = () =>
    act(async () => {
      await call('session.signOut', { profileId: profile.id });
      setMe(null);
    });

  const headingId = `profile-${profile.id}`;
  return (
    <li className="profile" aria-labelledby={headingId} data-testid="profile">
      <h3 id={headingId}>{profile.name}</h3>
      <p className="muted">
        {profile.kind === 'embedded' ? 'Embedded server on this machine' : `Remote: ${profile.baseUrl ?? ''}`} ·{' '}
        {profile.signedIn ? 'signed in' : 'signed out'}
      </p>
      {profile.signedIn ? (
        <>
          {me && (
            <p data-testid="signed-in-user">
              Signed in as <strong>{me.email}</strong> ({me.role}) of <strong>{me.organization.name}</strong>
            </p>
          )}
          <button type="button" disabled={busy} onClick={() => void signOut()} data-testid="sign-out">
            Sign out
          </button>
        </>
      ) : (
        demoAccount && (
          <button
            type="button"
            disabled={busy || !embeddedRunning}
            onClick={() => void signInAsDemo()}
            data-testid="demo-sign-in"
          >
            Sign in as the demo admin <span className="muted">({demoAccount.email})</span>
          </button>
        )
      )}
    </li>
  );
}

const root = document.getElementById('root');
if (root) {
  createRoot(root).render(
    <StrictMode>
      <App />
    </StrictMode>,
  );
}
