import { Field } from '../Field.js';

export interface Choice {
  value: string;
  label: string;
}

/**
 * A filter's select: "all" (no parameter) or one of the choices. A value from the address
 * that is not among the choices (a revoked key, a status this console does not offer) is
 * shown as what it is and stays selected, never as "all" while the view is filtered by it.
 */
export function ChoiceSelect(props: {
  label: string;
  value: string | null;
  /** The option that removes the filter: "All projects". */
  all: string;
  /** Null while the choices are not known (loading, or their list failed). */
  choices: readonly Choice[] | null;
  /** Waiting for the choices: the select is off meanwhile. */
  loading?: boolean;
  /** How a value that is not a choice reads: "Unknown key (cccccccc…)". */
  unknown: (value: string) => string;
  onChange: (value: string | null) => void;
  testId?: string;
}) {
  const { value, choices } = props;
  const missing = value !== null && !choices?.some((choice) => choice.value === value);
  return (
    <Field label={props.label}>
      <select
        value={value ?? ''}
        onChange={(event) => props.onChange(event.target.value || null)}
        disabled={props.loading}
        data-testid={props.testId}
      >
        <option value="">{props.all}</option>
        {choices?.map((choice) => (
          <option key={choice.value} value={choice.value}>
            {choice.label}
          </option>
        ))}
        {missing && <option value={value}>{props.loading ? 'Loading…' : props.unknown(value)}</option>}
      </select>
    </Field>
  );
}
