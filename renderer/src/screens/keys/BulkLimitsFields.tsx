import { Field } from '../../components/Field.js';
import { zoneOffset } from '../../lib/local-time-input.js';
import type { BulkField, BulkLimitsForm, Mode } from './bulk-limits.js';

/** The three limits of a bulk change, each kept, set for every key, or removed. */
export function BulkLimitsFields(props: {
  form: BulkLimitsForm;
  onChange: (form: BulkLimitsForm) => void;
  errors: Partial<Record<BulkField | 'form', string>>;
}) {
  const { form, errors } = props;
  const set = <F extends BulkField>(field: F, patch: Partial<BulkLimitsForm[F]>) =>
    props.onChange({ ...form, [field]: { ...form[field], ...patch } });
  return (
    <div className="bulk-limits-form">
      <p className="muted">Each limit left as “keep” stays as every key has it now.</p>
      <ModeChoice
        label="Rate limit"
        field="rate"
        mode={form.rate.mode}
        onMode={(mode) => set('rate', { mode: mode as 'keep' | 'set' })}
        remove={null}
      />
      {form.rate.mode === 'set' && (
        <Field label="Rate limit (requests per minute)" error={errors.rate} testId="bulk-field-rate">
          <input value={form.rate.text} onChange={(e) => set('rate', { text: e.target.value })} inputMode="numeric" />
        </Field>
      )}
      <ModeChoice
        label="Credit limit"
        field="credit"
        mode={form.credit.mode}
        onMode={(mode) => set('credit', { mode })}
        remove="remove the limit (unlimited)"
      />
      {form.credit.mode === 'set' && (
        <Field label="Credit limit (PKR)" error={errors.credit} testId="bulk-field-credit">
          <input
            value={form.credit.text}
            onChange={(e) => set('credit', { text: e.target.value })}
            inputMode="decimal"
          />
        </Field>
      )}
      <ModeChoice
        label="Expiry"
        field="expiry"
        mode={form.expiry.mode}
        onMode={(mode) => set('expiry', { mode })}
        remove="remove the expiry (never expires)"
      />
      {form.expiry.mode === 'set' && (
        <Field
          label="Expires"
          error={errors.expiry}
          hint={`Your local time (UTC${zoneOffset(new Date())}).`}
          testId="bulk-field-expiry"
        >
          <input
            type="datetime-local"
            value={form.expiry.text}
            onChange={(e) => set('expiry', { text: e.target.value })}
          />
        </Field>
      )}
    </div>
  );
}

function ModeChoice(props: {
  label: string;
  field: BulkField;
  mode: Mode;
  onMode: (mode: Mode) => void;
  /** The words for removing it; null when it cannot be removed. */
  remove: string | null;
}) {
  return (
    <Field label={props.label} testId={`bulk-mode-${props.field}`}>
      <select value={props.mode} onChange={(e) => props.onMode(e.target.value as Mode)}>
        <option value="keep">keep each key’s own</option>
        <option value="set">set for every key</option>
        {props.remove && <option value="remove">{props.remove}</option>}
      </select>
    </Field>
  );
}
