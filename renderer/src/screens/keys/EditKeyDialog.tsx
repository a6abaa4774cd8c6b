import { useState } from 'react';
import type { CallArgs } from '#contract';
import { Field } from '../../components/Field.js';
import { FormDialog } from '../../components/FormActions.js';
import { microToPkrNumber } from '../../lib/credit-limit.js';
import type { FieldRule, FormErrors } from '../../lib/field-errors.js';
import { isExpired } from '../../lib/key-table.js';
import { isoToLocalInput, toEpochSeconds } from '../../lib/local-time-input.js';
import { formatMicroPkr, microToPkrText } from '../../lib/money.js';
import { api } from '../../state/api.js';
import type { Key } from '../../state/directory.js';
import { readKeyLimits, useKeyForm, type Checked } from './key-form.js';
import { CreditLimitField, ExpiryField } from './KeyLimitFields.js';

type UpdateBody = CallArgs<'api.updateKey'>['body'];
type FieldName = 'rate' | 'credit' | 'expiry';
type Errors = FormErrors<FieldName>;

// The server's 400s (server/domain/keys.ts updateKeyLimits): "rate limit … above the platform
// ceiling", "expires_at must be in the future", and the three credit-limit checks.
const RULES: FieldRule<FieldName>[] = [
  { field: 'rate', names: ['rate_limit_rpm'] },
  { field: 'expiry', names: ['expires_at'] },
  { field: 'credit', names: ['credit_limit_pkr'] },
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

  const check = (): Checked<FieldName, UpdateBody> => {
    const { limits, errors: limitErrors } = readKeyLimits(credit, expiry);
    const found: Errors = { ...limitErrors };
    const rpm = /^\s*\d+\s*$/.test(rate) ? Number(rate) : NaN;
    if (!Number.isSafeInteger(rpm) || rpm < 1) found.rate = 'enter a whole number of requests per minute, at least 1';
    if (!limits || Object.keys(found).length > 0) return { errors: found };
    return {
      body: {
        rate_limit_rpm: rpm,
        credit_limit_pkr: limits.creditMicro === null ? null : microToPkrNumber(limits.creditMicro),
        expires_at: limits.expires === null ? null : toEpochSeconds(limits.expires),
      },
    };
  };
  const { submit, busy, errors } = useKeyForm(RULES, check, async (body) => {
    await api('api.updateKey', { params: { key_id: key.id }, body });
    props.onSaved();
  });

  return (
    <FormDialog
      title={`Edit “${key.name}”`}
      testId="edit-key-dialog"
      onClose={props.onClose}
      onSubmit={submit}
      error={errors.form}
      busy={busy}
      submitLabel="Save limits"
      busyLabel="Saving…"
      submitTestId="submit-edit"
    >
      <p className="muted">
        <code>{key.key_prefix}…</code> · {key.environment}. Saving replaces all three limits.
      </p>
      <Field label="Rate limit (requests per minute)" error={errors.rate} testId="field-rate">
        <input value={rate} onChange={(e) => setRate(e.target.value)} inputMode="numeric" autoComplete="off" />
      </Field>
      <CreditLimitField
        value={credit}
        onChange={setCredit}
        error={errors.credit}
        hint={`Leave empty for no limit. Spent so far: ${formatMicroPkr(props.spentMicro)}.`}
        testId="field-credit"
      />
      <ExpiryField
        value={expiry}
        onChange={setExpiry}
        error={errors.expiry}
        hint={
          isExpired(key)
            ? 'This key has expired: set a later time, or clear the field for no expiry, to save.'
            : undefined
        }
        seconds
        testId="field-expiry"
      />
    </FormDialog>
  );
}
