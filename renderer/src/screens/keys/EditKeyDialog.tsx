import { useState, type FormEvent } from 'react';
import type { CallArgs } from '../../../../main/core/contract.js';
import { Dialog } from '../../components/Dialog.js';
import { Field } from '../../components/Field.js';
import { FormActions } from '../../components/FormActions.js';
import { useAction } from '../../components/useAction.js';
import { microToPkrNumber, parseCreditLimit } from '../../lib/credit-limit.js';
import { formErrors, type FieldRule, type FormErrors } from '../../lib/field-errors.js';
import { isExpired } from '../../lib/key-table.js';
import { isoToLocalInput, parseLocalInput, toEpochSeconds, zoneOffset } from '../../lib/local-time-input.js';
import { formatMicroPkr, microToPkrText } from '../../lib/money.js';
import { api } from '../../state/api.js';
import type { Key } from '../../state/directory.js';

type UpdateBody = CallArgs<'api.updateKey'>['body'];
type FieldName = 'rate' | 'credit' | 'expiry';
type Errors = FormErrors<FieldName>;

// The server's 400s (server/domain/keys.ts updateKeyLimits): "rate limit … above the platform
// ceiling", "expires_at must be in the future", and the three credit-limit checks.
const RULES: FieldRule<FieldName>[] = [
  { field: 'rate', names: ['rate_limit_rpm'], words: /rate.limit/i },
  { field: 'expiry', names: ['expires_at'], words: /expires_at|expir/i },
  { field: 'credit', names: ['credit_limit_pkr'], words: /credit/i },
];

/**
 * PATCH /keys/{id} replaces all three limits at once, so the form starts from the key's
 * current values and sends every one: empty credit limit and empty expiry mean none.
 */
export function EditKeyDialog(props: {
  keyToEdit: Key;
  spentMicro: number | null;
  onClose: () => void;
  onSaved: () => void;
}) {
  const key = props.keyToEdit;
  const [rate, setRate] = useState(String(key.rate_limit_rpm));
  const [credit, setCredit] = useState(key.credit_limit_cents === null ? '' : microToPkrText(key.credit_limit_cents));
  const [expiry, setExpiry] = useState(isoToLocalInput(key.expires_at));
  const { run, busy, error, setError } = useAction((e) => formErrors(e, RULES));
  const errors: Errors = error ?? {};
  const expired = isExpired(key);

  const validate = (): { body: UpdateBody } | { errors: Errors } => {
    const found: Errors = {};
    const rpm = /^\s*\d+\s*$/.test(rate) ? Number(rate) : NaN;
    if (!Number.isSafeInteger(rpm) || rpm < 1) found.rate = 'enter a whole number of requests per minute, at least 1';
    const limit = parseCreditLimit(credit);
    if (!limit.ok) found.credit = limit.error;
    let expiresAt: number | null = null;
    if (expiry !== '') {
      const parsed = parseLocalInput(expiry);
      if (parsed.ok) expiresAt = toEpochSeconds(parsed.date);
      else found.expiry = parsed.error;
    }
    if (Object.keys(found).length > 0 || !limit.ok) return { errors: found };
    return {
      body: {
        rate_limit_rpm: rpm,
        credit_limit_pkr: limit.micro === null ? null : microToPkrNumber(limit.micro),
        expires_at: expiresAt,
      },
    };
  };

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    const checked = validate();
    if ('errors' in checked) {
      setError(checked.errors);
      return;
    }
    await run(async () => {
      await api('api.updateKey', { params: { key_id: key.id }, body: checked.body });
      props.onSaved();
    });
  };

  return (
    <Dialog title={`Edit “${key.name}”`} onClose={props.onClose} testId="edit-key-dialog">
      <form className="stack" onSubmit={submit} noValidate>
        <p className="muted">
          <code>{key.key_prefix}…</code> · {key.environment}. Saving replaces all three limits.
        </p>
        <Field label="Rate limit (requests per minute)" error={errors.rate} testId="field-rate">
          <input value={rate} onChange={(e) => setRate(e.target.value)} inputMode="numeric" autoComplete="off" />
        </Field>
        <Field
          label="Credit limit (PKR)"
          error={errors.credit}
          hint={`Leave empty for no limit. Spent so far: ${formatMicroPkr(props.spentMicro)}.`}
          testId="field-credit"
        >
          <input
            value={credit}
            onChange={(e) => setCredit(e.target.value)}
            inputMode="decimal"
            placeholder="unlimited"
          />
        </Field>
        <Field
          label="Expires"
          error={errors.expiry}
          hint={
            expired
              ? 'This key has expired: set a later time, or clear the field for no expiry, to save.'
              : `Your local time (UTC${zoneOffset(new Date())}). Leave empty for no expiry.`
          }
          testId="field-expiry"
        >
          <input type="datetime-local" step={1} value={expiry} onChange={(e) => setExpiry(e.target.value)} />
        </Field>
        <FormActions
          error={errors.form}
          busy={busy}
          submitLabel={'Save limits'}
          busyLabel={'Saving…'}
          submitTestId="submit-edit"
          onCancel={props.onClose}
        />
      </form>
    </Dialog>
  );
}
