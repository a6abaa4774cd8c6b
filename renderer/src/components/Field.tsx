import { useId, type ReactElement, type ReactNode } from 'react';
import { cloneElement } from 'react';

/**
 * A labelled form control with its hint and its error: the error is announced and tied to
 * the control (aria-describedby), so it reads where the problem is.
 */
export function Field(props: {
  label: string;
  hint?: ReactNode;
  error?: string | null;
  children: ReactElement<Record<string, unknown>>;
  testId?: string;
}) {
  const id = useId();
  const hintId = `${id}-hint`;
  const errorId = `${id}-error`;
  const describedBy = [props.hint ? hintId : null, props.error ? errorId : null].filter(Boolean).join(' ') || undefined;
  return (
    <div className={props.error ? 'field invalid' : 'field'} data-testid={props.testId}>
      <label htmlFor={id}>{props.label}</label>
      {cloneElement(props.children, {
        id,
        'aria-describedby': describedBy,
        'aria-invalid': props.error ? true : undefined,
      })}
      {props.hint && (
        <small id={hintId} className="muted">
          {props.hint}
        </small>
      )}
      {props.error && (
        <small id={errorId} role="alert" className="error" data-testid="field-error">
          {props.error}
        </small>
      )}
    </div>
  );
}
