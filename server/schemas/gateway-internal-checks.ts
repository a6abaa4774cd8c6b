import { TypeCompiler } from '@sinclair/typebox/compiler';
import { AdmissionRequest, GatewayRow } from './gateway-internal.js';

/**
 * The internal API's items checked one at a time: a batch carries many callers' requests or rows,
 * and a refusal of the whole batch for one of them would fail (or lose) all the others.
 */
const checks = {
  admission: TypeCompiler.Compile(AdmissionRequest),
  row: TypeCompiler.Compile(GatewayRow),
};

/** Why `value` is not what the schema asks, in a sentence of bounded length; null when it is. */
function problemOf(check: (typeof checks)[keyof typeof checks], value: unknown): string | null {
  if (check.Check(value)) return null;
  const first = check.Errors(value).First();
  // The path and the rule only, short enough for a refusal on the wire (1,024): the value itself
  // may be a caller's secret, or 100 kB long.
  return first ? `${first.path || '/'}: ${first.message}`.slice(0, 200) : 'not a valid item';
}

/** Null for a request the control plane can decide; otherwise why it cannot. */
export const whyAdmissionRefused = (value: unknown): string | null => problemOf(checks.admission, value);

/** Null for a row the request log can take; otherwise why it cannot. */
export const whyRowRefused = (value: unknown): string | null => problemOf(checks.row, value);
