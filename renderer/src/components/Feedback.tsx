import type { ReactNode } from 'react';

/** An error where it happened, in the words the server or host gave. */
export function ErrorNote({
  error,
  onRetry,
  testId,
}: {
  error: string | null | undefined;
  onRetry?: () => void;
  testId?: string;
}) {
  if (!error) return null;
  return (
    <p role="alert" className="error" data-testid={testId ?? 'error'}>
      {error}
      {onRetry && <RetryButton onRetry={onRetry} />}
    </p>
  );
}

/**
 * What a part of the analytics says while the server cannot read its request telemetry (it
 * answered 503; the shell's banner says so too), with a way to ask again when there is one.
 */
export function UnavailableNote({
  subject,
  onRetry,
  testId,
}: {
  /** What is unavailable, as the sentence starts: "Figures are", "The chart is". */
  subject: string;
  onRetry?: () => void;
  testId: string;
}) {
  return (
    <p className="muted" role="status" data-testid={testId}>
      {subject} unavailable while the server cannot read its request telemetry.
      {onRetry && <RetryButton onRetry={onRetry} />}
    </p>
  );
}

function RetryButton({ onRetry }: { onRetry: () => void }) {
  return (
    <>
      {' '}
      <button type="button" className="link" onClick={onRetry}>
        Try again
      </button>
    </>
  );
}

export function Loading({ children = 'Loading…' }: { children?: ReactNode }) {
  return (
    <p className="muted loading" role="status" aria-live="polite">
      {children}
    </p>
  );
}

export function Empty({ children }: { children: ReactNode }) {
  return <p className="muted empty">{children}</p>;
}
