import { timeParamToLocalInput } from '../../lib/local-time-input.js';
import { Field } from '../Field.js';

/**
 * One end of a window between two times: a local date and time, applied once the picker holds
 * a whole one; cleared, the bound goes. The parameter may be an exact instant another screen
 * linked to: it is shown in the user’s zone.
 */
export function TimeBound(props: {
  label: string;
  value: string | undefined;
  onChange: (value: string | null) => void;
  testId: string;
  /** Why the window cannot be used, said at this end. */
  error?: string | null;
}) {
  return (
    <Field label={props.label} error={props.error}>
      <input
        type="datetime-local"
        value={props.value ? timeParamToLocalInput(props.value) : ''}
        onChange={(event) => props.onChange(event.target.value || null)}
        data-testid={props.testId}
      />
    </Field>
  );
}
