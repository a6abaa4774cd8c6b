import type { FormEvent, ReactNode } from 'react';
import { Dialog } from './Dialog.js';
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

/** A dialog that is one form: its fields, then the form's actions. The browser's own checks are off. */
export function FormDialog(
  props: Omit<Parameters<typeof FormActions>[0], 'onCancel'> & {
    title: string;
    testId: string;
    wide?: boolean;
    onClose: () => void;
    onSubmit: (event: FormEvent) => void;
    children: ReactNode;
  },
) {
  const { title, testId, wide, onClose, onSubmit, children, ...actions } = props;
  return (
    <Dialog title={title} onClose={onClose} testId={testId} wide={wide}>
      <form className="stack" onSubmit={onSubmit} noValidate>
        {children}
        <FormActions {...actions} onCancel={onClose} />
      </form>
    </Dialog>
  );
}
