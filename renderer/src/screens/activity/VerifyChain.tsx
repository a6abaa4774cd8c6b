import { ErrorNote } from '../../components/Feedback.js';
import { Time } from '../../components/Time.js';
import { actionLabel } from '../../lib/activity.js';
import { formatCount } from '../../lib/format.js';
import { useVerify } from './verify-store.js';

/** The Verify button and what it found: the chain holds, or the first event that does not match. */
export function VerifyChain() {
  const status = useVerify((s) => s.status);
  const checked = useVerify((s) => s.checked);
  const total = useVerify((s) => s.total);
  const headHash = useVerify((s) => s.headHash);
  const broken = useVerify((s) => s.broken);
  const error = useVerify((s) => s.error);
  const run = useVerify((s) => s.run);
  const running = status === 'running';

  return (
    <div className="activity-verify" role="group" aria-label="Verify" data-testid="activity-verify">
      <button
        type="button"
        onClick={() => void run()}
        disabled={running}
        title="Recompute every event's hash, each chained to the one before it, and compare with the stored ones"
        data-testid="activity-verify-button"
      >
        {running ? 'Verifying…' : 'Verify'}
      </button>
      {running && (
        <span className="activity-verify-progress">
          <progress value={total === null ? undefined : checked} max={total || 1} aria-label="Events verified" />
          <span aria-live="polite">
            {formatCount(checked)} of {total === null ? '…' : formatCount(total)} events checked
          </span>
        </span>
      )}
      {status === 'holds' && (
        <span role="status" data-testid="activity-verify-holds">
          The chain holds: all {formatCount(checked)} events match their hashes.{' '}
          {headHash && (
            <span className="muted">
              Newest hash <code title={headHash}>{headHash.slice(0, 16)}…</code>
            </span>
          )}
        </span>
      )}
      {status === 'broken' && broken && (
        <p role="alert" className="error" data-testid="activity-verify-broken">
          The chain breaks at event #{broken.position}
          {broken.timestamp && broken.action && (
            <>
              {' '}
              (<Time iso={broken.timestamp} />, {actionLabel(broken.action)} <code>{broken.action}</code>)
            </>
          )}
          : {broken.message}.
        </p>
      )}
      {status === 'failed' && <ErrorNote error={`Verify failed: ${error ?? ''}`} testId="activity-verify-error" />}
    </div>
  );
}
