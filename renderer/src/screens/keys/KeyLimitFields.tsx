import { Field } from '../../components/Field.js';
import { zoneOffset } from '../../lib/local-time-input.js';

/** The limit fields the create and edit dialogs of a key share; each dialog says its own hints. */

interface LimitFieldProps {
  value: string;
  onChange: (value: string) => void;
  error: string | undefined;
  testId?: string;
}

/** A lifetime spend cap in PKR; empty is no limit. */
export function CreditLimitField(props: LimitFieldProps & { hint: string }) {
  return (
    <Field label="Credit limit (PKR)" error={props.error} hint={props.hint} testId={props.testId}>
      <input
        value={props.value}
        onChange={(e) => props.onChange(e.target.value)}
        inputMode="decimal"
        placeholder="unlimited"
      />
    </Field>
  );
}

/** An expiry in the user's local time; empty is none. */
export function ExpiryField(
  props: LimitFieldProps & {
    /** Said instead of the usual hint (an expired key). */
    hint?: string;
    /** Seconds can be typed (a key's current expiry may have them). */
    seconds?: boolean;
  },
) {
  return (
    <Field
      label="Expires"
      error={props.error}
      hint={props.hint ?? `Your local time (UTC${zoneOffset(new Date())}). Leave empty for no expiry.`}
      testId={props.testId}
    >
      <input
        type="datetime-local"
        step={props.seconds ? 1 : undefined}
        value={props.value}
        onChange={(e) => props.onChange(e.target.value)}
      />
    </Field>
  );
}
