import { BridgeError, errorMessage } from '../bridge.js';

/**
 * Where a refused request's error belongs in a form. The server names a field in three
 * ways: a 422's `detail[].loc` (["body", "name"]), the host's own argument check
 * ("invalid arguments for api.createKey: /body/credit_limit_cents …"), or the words of a
 * 400 ("expires_at must be in the future", "credit limits would total …"). An error that
 * names none of the form's fields is the form's.
 */

export interface FieldRule<F extends string> {
  field: F;
  /** Request field names (as in `loc` or the host's path) that belong to this form field. */
  names: readonly string[];
  /** Words in a message that point at this field. */
  words: RegExp;
}

export interface PlacedError<F extends string> {
  /** Null: the error belongs to the form as a whole. */
  field: F | null;
  message: string;
}

const PLACEABLE = new Set([400, 404, 422]);

function namesIn(error: BridgeError): string[] {
  const names: string[] = [];
  if (Array.isArray(error.detail)) {
    for (const issue of error.detail as { loc?: unknown }[]) {
      if (Array.isArray(issue?.loc)) for (const part of issue.loc) if (typeof part === 'string') names.push(part);
    }
  }
  const hostPath = /^invalid arguments for [\w.]+: \/(?:body|params|query)\/(\w+)/.exec(error.message);
  if (hostPath?.[1]) names.push(hostPath[1]);
  // The host words a 422 from the server as "<loc without 'body'>: <msg>".
  const prefixed = /^([a-z_]+)(?:\.[\w.]+)?: /.exec(error.message);
  if (prefixed?.[1]) names.push(prefixed[1]);
  return names;
}

export function placeError<F extends string>(error: unknown, rules: readonly FieldRule<F>[]): PlacedError<F> {
  if (!(error instanceof BridgeError) || !PLACEABLE.has(error.status)) {
    return { field: null, message: errorMessage(error) };
  }
  const names = namesIn(error);
  const byName = rules.find((rule) => rule.names.some((name) => names.includes(name)));
  const rule = byName ?? rules.find((r) => r.words.test(error.message));
  return rule ? { field: rule.field, message: error.message } : { field: null, message: errorMessage(error) };
}

/** A form's errors: one per field, and the form's own under `form`. */
export type FormErrors<F extends string> = Partial<Record<F | 'form', string>>;

/** A refusal as a form's errors: at the field it names, else at the form. */
export function formErrors<F extends string>(error: unknown, rules: readonly FieldRule<F>[]): FormErrors<F> {
  const placed = placeError(error, rules);
  return { [placed.field ?? 'form']: placed.message } as FormErrors<F>;
}
