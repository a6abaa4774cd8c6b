import { ErrorNote } from './Feedback.js';

/** The end of a dialog's form: its form-level error, Cancel, and a submit button that says when it is busy. */
export function FormActions(props: {
  error: string | null | undefined;
  busy: boolean;
  submitLabel: string;
  busyLabel: string;
  submitTestId: string;
  onCancel: () => void;
}) {
  return (
    <>
      <ErrorNote error={props.error} testId="form-error" />
      <div className="actions">
        <button type="button" onClick={props.onCancel}>
          Cancel
        </button>
        <button type="submit" className="primary" disabled={props.busy} data-testid={props.submitTestId}>
          {props.busy ? props.busyLabel : props.submitLabel}
        </button>
      </div>
    </>
  );
}
