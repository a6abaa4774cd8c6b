import { call } from '../../bridge.js';
import { ErrorNote } from '../../components/Feedback.js';
import { useAction } from '../../components/useAction.js';
import { useSession } from '../../state/session.js';
import { DemoHistoryProgress } from '../../app/DemoHistoryNote.js';

/** The embedded server's state, its last log lines when it crashed, and the demo sign-in. */
export function EmbeddedPanel({ profileId }: { profileId: string }) {
  const status = useSession((s) => s.embedded);
  const statusError = useSession((s) => s.embeddedError);
  const signedIn = useSession((s) => s.signedIn);
  const { run, busy, error } = useAction();

  if (!status) {
    return statusError ? (
      <ErrorNote error={`The host could not say how the embedded server is: ${statusError}`} />
    ) : (
      <p className="muted">Asking the host about the embedded server…</p>
    );
  }
  return (
    <div className="embedded" data-testid="embedded-panel">
      <p aria-live="polite" data-testid="embedded-state">
        Embedded server: <strong className={`state state-${status.state}`}>{status.state}</strong>
        {status.state === 'starting' && <span className="muted"> (the first start seeds the demo data)</span>}
      </p>
      {status.state === 'running' && status.demoHistory && <DemoHistoryProgress history={status.demoHistory} />}
      {status.state === 'crashed' && (
        <>
          <pre className="log" data-testid="embedded-log" aria-label="The embedded server's last log lines">
            {status.lastLog.slice(-15).join('\n') || 'It printed nothing.'}
          </pre>
          <button type="button" disabled={busy} onClick={() => void run(() => call('embedded.restart', {}))}>
            Restart the embedded server
          </button>
        </>
      )}
      {status.state === 'running' && status.demoAccount && (
        <button
          type="button"
          className="primary"
          disabled={busy}
          data-testid="demo-sign-in"
          onClick={() =>
            void run(async () => {
              await call('session.signInDemo', { profileId });
              await signedIn(profileId);
            })
          }
        >
          {busy ? 'Signing in…' : `Sign in as the demo admin (${status.demoAccount.email})`}
        </button>
      )}
      <ErrorNote error={error} />
    </div>
  );
}
