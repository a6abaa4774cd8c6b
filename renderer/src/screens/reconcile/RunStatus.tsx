import { ErrorNote, UnavailableNote } from '../../components/Feedback.js';
import { formatCount } from '../../lib/format.js';
import { useReconcileRun } from './reconcile-run.js';
import { coverageText } from './reconcile-window.js';

/**
 * Where a check is: its progress and the Stop button while it runs; once it ended early, which
 * days its report covers and a way to check the rest. Nothing before the first check.
 */
export function RunStatus() {
  const status = useReconcileRun((s) => s.status);
  const days = useReconcileRun((s) => s.days);
  const checked = useReconcileRun((s) => s.checked);
  const error = useReconcileRun((s) => s.error);
  const stop = useReconcileRun((s) => s.stop);
  const resume = useReconcileRun((s) => s.resume);
  const coverage = coverageText(days, checked);

  switch (status) {
    case 'idle':
      return (
        <p className="muted" data-testid="reconcile-idle">
          Nothing has been checked yet: pick the days and the scope, then Check.
        </p>
      );
    case 'running':
      return (
        <div className="reconcile-progress" data-testid="reconcile-progress">
          <progress value={checked} max={days.length} aria-label="Days checked" />
          <span aria-live="polite" data-testid="reconcile-progress-text">
            {formatCount(checked)} of {formatCount(days.length)} {days.length === 1 ? 'day' : 'days'} checked
          </span>
          <button type="button" onClick={stop} data-testid="reconcile-stop">
            Stop
          </button>
        </div>
      );
    case 'stopped':
      return (
        <p role="status" data-testid="reconcile-stopped">
          Stopped. {coverage}{' '}
          {checked < days.length && (
            <button type="button" className="link" onClick={resume} data-testid="reconcile-resume">
              Check the rest
            </button>
          )}
        </p>
      );
    case 'failed':
      return (
        <ErrorNote error={`The check stopped: ${error ?? ''}. ${coverage}`} onRetry={resume} testId="reconcile-error" />
      );
    case 'unavailable':
      return (
        <>
          <UnavailableNote subject="The check is" onRetry={resume} testId="reconcile-unavailable" />
          <p className="muted">{coverage}</p>
        </>
      );
    case 'not-offered':
      return (
        <p className="muted" role="status" data-testid="reconcile-not-offered">
          This control plane does not offer the check (it has only the contract&apos;s endpoints).
        </p>
      );
    case 'done':
      return null;
  }
}
