import { useEffect, useState } from 'react';
import { Field } from '../Field.js';

/**
 * A text filter applied when the person is done typing it (Enter, or leaving the field),
 * not on every keystroke: "3" on the way to "36h" is not a range to ask the server for.
 * A value that does not pass `check` stays in the field with the reason beside it.
 */
export function CommitInput(props: {
  label: string;
  value: string;
  check: (text: string) => string | null;
  onCommit: (text: string) => void;
  hint?: string;
  placeholder?: string;
  testId?: string;
  inputMode?: 'decimal' | 'text';
  autoFocus?: boolean;
}) {
  const { value, check } = props;
  const [draft, setDraft] = useState(value);
  const [error, setError] = useState<string | null>(() => (value ? check(value) : null));

  // A change from elsewhere (Clear filters, a restored address) replaces the draft.
  useEffect(() => {
    setDraft(value);
    setError(value ? check(value) : null);
  }, [value, check]);

  const commit = () => {
    const text = draft.trim();
    const problem = text ? props.check(text) : null;
    setError(problem);
    if (!problem && text !== value) props.onCommit(text);
  };

  return (
    <Field label={props.label} hint={props.hint} error={error} testId={props.testId}>
      <input
        value={draft}
        placeholder={props.placeholder}
        inputMode={props.inputMode}
        // Only where the person just asked for this field (choosing "Custom…").
        autoFocus={props.autoFocus}
        onChange={(event) => setDraft(event.target.value)}
        onBlur={commit}
        onKeyDown={(event) => {
          if (event.key === 'Enter') {
            event.preventDefault();
            commit();
          }
        }}
      />
    </Field>
  );
}
