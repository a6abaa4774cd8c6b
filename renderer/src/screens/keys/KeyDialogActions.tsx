/**
 * The end of the key dialogs that ask before acting (revoke, rotate, revoke the old key):
 * the server's refusal, if any, then a way out and the action, disabled while it runs.
 */
export function KeyDialogActions(props: {
  error: string | null;
  errorTestId?: string;
  busy: boolean;
  cancelLabel?: string;
  cancelTestId?: string;
  onCancel: () => void;
  confirmLabel: string;
  confirmTestId: string;
  danger?: boolean;
  onConfirm: () => void;
}) {
  return (
    <>
      {props.error && (
        <p role="alert" className="error" data-testid={props.errorTestId}>
          {props.error}
        </p>
      )}
      <div className="actions">
        <button type="button" onClick={props.onCancel} data-testid={props.cancelTestId}>
          {props.cancelLabel ?? 'Cancel'}
        </button>
        <button
          type="button"
          className={props.danger ? 'danger' : 'primary'}
          disabled={props.busy}
          onClick={props.onConfirm}
          data-testid={props.confirmTestId}
        >
          {props.busy ? 'Working…' : props.confirmLabel}
        </button>
      </div>
    </>
  );
}
