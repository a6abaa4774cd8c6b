import { useRef, useState } from 'react';
import { errorMessage } from '../bridge.js';

/**
 * One user action at a time (a submit, a confirmation, a button): `busy` while it runs, its
 * failure in `error` for the component to show where it happened. `describe` turns a failure
 * into what the component shows (a message by default; a field's error in a form), or null
 * when it has handled the failure itself. A second run while one is on its way is ignored,
 * so a double click sends nothing twice.
 */
export interface Action<E> {
  /** Runs `action`; resolves true when it succeeded. */
  run(action: () => Promise<unknown>): Promise<boolean>;
  busy: boolean;
  error: E | null;
  /** For what the component finds itself, such as a form's own checks before sending. */
  setError(error: E | null): void;
}

export function useAction(): Action<string>;
export function useAction<E>(describe: (error: unknown) => E | null): Action<E>;
export function useAction<E>(describe?: (error: unknown) => E | null): Action<E> {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<E | null>(null);
  // A ref, not `busy`: two clicks in one frame both see the `busy` of the render before.
  const running = useRef(false);

  const run = async (action: () => Promise<unknown>) => {
    if (running.current) return false;
    running.current = true;
    setBusy(true);
    setError(null);
    try {
      await action();
      return true;
    } catch (failure) {
      setError(describe ? describe(failure) : (errorMessage(failure) as E));
      return false;
    } finally {
      running.current = false;
      setBusy(false);
    }
  };

  return { run, busy, error, setError };
}
