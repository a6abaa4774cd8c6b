import type { CallArgs } from '#contract';
import { microToPkrNumber, parseCreditLimit } from '../../lib/credit-limit.js';
import { parseLocalInput, toEpochSeconds } from '../../lib/local-time-input.js';

/**
 * The bulk limits form as typed: each limit is kept as every key has it, set to one value
 * for all, or (credit limit, expiry) removed. Only the limits changed are sent.
 */

export type BulkLimits = NonNullable<CallArgs<'api.bulkKeys'>['body']['limits']>;
export type Mode = 'keep' | 'set' | 'remove';

export interface BulkLimitsForm {
  rate: { mode: 'keep' | 'set'; text: string };
  credit: { mode: Mode; text: string };
  expiry: { mode: Mode; text: string };
}

export type BulkField = keyof BulkLimitsForm;

export const EMPTY_FORM: BulkLimitsForm = {
  rate: { mode: 'keep', text: '' },
  credit: { mode: 'keep', text: '' },
  expiry: { mode: 'keep', text: '' },
};

export function readBulkLimits(
  form: BulkLimitsForm,
): { limits: BulkLimits } | { errors: Partial<Record<BulkField | 'form', string>> } {
  const limits: BulkLimits = {};
  const errors: Partial<Record<BulkField | 'form', string>> = {};
  if (form.rate.mode === 'set') {
    const rpm = /^\s*\d+\s*$/.test(form.rate.text) ? Number(form.rate.text) : NaN;
    if (!Number.isSafeInteger(rpm) || rpm < 1) errors.rate = 'enter a whole number of requests per minute, at least 1';
    else limits.rate_limit_rpm = rpm;
  }
  if (form.credit.mode === 'remove') limits.credit_limit_pkr = null;
  if (form.credit.mode === 'set') {
    const parsed = parseCreditLimit(form.credit.text);
    if (!parsed.ok) errors.credit = parsed.error;
    else if (parsed.micro === null) errors.credit = 'enter a credit limit, or choose “remove the limit”';
    else limits.credit_limit_pkr = microToPkrNumber(parsed.micro);
  }
  if (form.expiry.mode === 'remove') limits.expires_at = null;
  if (form.expiry.mode === 'set') {
    const parsed = parseLocalInput(form.expiry.text);
    if (!parsed.ok) errors.expiry = parsed.error;
    else limits.expires_at = toEpochSeconds(parsed.date);
  }
  if (Object.keys(errors).length > 0) return { errors };
  if (Object.keys(limits).length === 0) return { errors: { form: 'choose at least one limit to change' } };
  return { limits };
}
