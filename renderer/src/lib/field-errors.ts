import { BridgeError, errorMessage } from '../bridge.js';

/**
 * Where a refused request's error belongs in a form. The error names the request field it
 * concerns as data, `BridgeError.field` (from the server's `x-error-field` header, a 422's
 * `detail[0].loc`, or the host's own argument check); its message is for reading only and is
 * never parsed, so rewording a message never moves its error. An error with no field, or one
 * naming no field of this form, is the form's.
 */

export interface FieldRule<F extends string> {
  field: F;
  /** Request field names (`credit_limit_cents`, as the server and host name them) shown at this form field. */
  names: readonly string[];
}

export interface PlacedError<F extends string> {
  /** Null: the error belongs to the form as a whole. */
  field: F | null;
  message: string;
}

/** Refusals of the request itself; anything else (a failure, a lost session) is the form's. */
const PLACEABLE = new Set([400, 404, 409, 422]);

export function placeError<F extends string>(error: unknown, rules: readonly FieldRule<F>[]): PlacedError<F> {
  const named = error instanceof BridgeError && PLACEABLE.has(error.status) ? error.field : undefined;
  const rule = named === undefined ? undefined : rules.find((r) => r.names.includes(named));
  return rule
    ? { field: rule.field, message: (error as BridgeError).message }
    : { field: null, message: errorMessage(error) };
}

/** A form's errors: one per field, and the form's own under `form`. */
export type FormErrors<F extends string> = Partial<Record<F | 'form', string>>;

/** A refusal as a form's errors: at the field it names, else at the form. */
export function formErrors<F extends string>(error: unknown, rules: readonly FieldRule<F>[]): FormErrors<F> {
  const placed = placeError(error, rules);
  return { [placed.field ?? 'form']: placed.message } as FormErrors<F>;
}
