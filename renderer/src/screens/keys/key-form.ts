import type { FormEvent } from 'react';
import { useAction } from '../../components/useAction.js';
import { parseCreditLimit } from '../../lib/credit-limit.js';
import { formErrors, type FieldRule, type FormErrors } from '../../lib/field-errors.js';
import { parseLocalInput } from '../../lib/local-time-input.js';

/**
 * What the create and edit dialogs of a key do alike: read the limits as typed, check the
 * form before sending, and place the server's refusal at the field it names. Each dialog
 * keeps its own fields, rules and body (creation takes micro-PKR and an ISO expiry, an edit
 * plain PKR and epoch seconds).
 */

export type LimitField = 'credit' | 'expiry';

/** The limits as typed, read; null where the field is empty (no limit, no expiry). */
export interface KeyLimits {
  creditMicro: number | null;
  expires: Date | null;
}

/** Reads the credit limit (PKR) and the expiry (local time); `limits` is null when either is wrong. */
export function readKeyLimits(
  credit: string,
  expiry: string,
): { limits: KeyLimits | null; errors: FormErrors<LimitField> } {
  const errors: FormErrors<LimitField> = {};
  const limit = parseCreditLimit(credit);
  if (!limit.ok) errors.credit = limit.error;
  let expires: Date | null = null;
  if (expiry !== '') {
    const parsed = parseLocalInput(expiry);
    if (parsed.ok) expires = parsed.date;
    else errors.expiry = parsed.error;
  }
  return { limits: limit.ok && !errors.expiry ? { creditMicro: limit.micro, expires } : null, errors };
}

/** A form's own check: the body to send, or the errors to show at its fields. */
export type Checked<F extends string, B> = { body: B } | { errors: FormErrors<F> };

/**
 * A key dialog's submit: checks the form, shows what is wrong at its fields, or sends the
 * body once (a second submit while it is on its way is ignored) and places a refusal by `rules`.
 */
export function useKeyForm<F extends string, B>(
  rules: readonly FieldRule<F>[],
  check: () => Checked<F, B>,
  send: (body: B) => Promise<unknown>,
): { submit: (event: FormEvent) => Promise<void>; busy: boolean; errors: FormErrors<F> } {
  const { run, busy, error, setError } = useAction((e) => formErrors(e, rules));
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    const checked = check();
    if ('errors' in checked) {
      setError(checked.errors);
      return;
    }
    await run(() => send(checked.body));
  };
  return { submit, busy, errors: error ?? {} };
}
