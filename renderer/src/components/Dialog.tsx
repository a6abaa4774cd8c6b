import { useEffect, useId, useRef, type ReactNode } from 'react';

/**
 * A modal dialog on the platform's <dialog>: focus moves in and back out, Escape closes,
 * the page behind is inert. Closing by any means calls `onClose`. A dialog that is not
 * `dismissible` (one showing what cannot be shown again) ignores Escape: only its own
 * buttons close it.
 */
export function Dialog(props: {
  title: string;
  onClose: () => void;
  children: ReactNode;
  testId?: string;
  wide?: boolean;
  dismissible?: boolean;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  const { onClose, dismissible = true } = props;

  useEffect(() => {
    const dialog = ref.current;
    if (!dialog) return;
    const opener = document.activeElement as HTMLElement | null;
    if (!dialog.open) dialog.showModal();
    return () => {
      if (dialog.open) dialog.close();
      opener?.focus?.();
    };
  }, []);

  return (
    <dialog
      ref={ref}
      className={props.wide ? 'dialog wide' : 'dialog'}
      aria-labelledby={titleId}
      data-testid={props.testId}
      onKeyDown={(event) => {
        // Cancelling the key stops the close request before it starts: a prevented cancel
        // event alone is not always honoured (the HTML close-watcher rules let a repeated
        // Escape without a click in between close the dialog regardless).
        if (!dismissible && event.key === 'Escape') event.preventDefault();
      }}
      onCancel={(event) => {
        event.preventDefault();
        if (dismissible) onClose();
      }}
    >
      <h2 id={titleId}>{props.title}</h2>
      {props.children}
    </dialog>
  );
}

/** Asks before something that cannot be undone; the question names what it acts on. */
export function ConfirmDialog(props: {
  title: string;
  message: ReactNode;
  confirmLabel: string;
  busy?: boolean;
  error?: string | null;
  onConfirm: () => void;
  onClose: () => void;
}) {
  return (
    <Dialog title={props.title} onClose={props.onClose} testId="confirm-dialog">
      <p>{props.message}</p>
      {props.error && (
        <p role="alert" className="error">
          {props.error}
        </p>
      )}
      <div className="actions">
        <button type="button" onClick={props.onClose}>
          Cancel
        </button>
        <button type="button" className="danger" disabled={props.busy} onClick={props.onConfirm} data-testid="confirm">
          {props.busy ? 'Working…' : props.confirmLabel}
        </button>
      </div>
    </Dialog>
  );
}
