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
      {onRetry && (
        <>
          {' '}
          <button type="button" className="link" onClick={onRetry}>
            Try again
          </button>
        </>
      )}
    </p>
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
