import type { AdmissionRequest } from '../schemas/gateway-internal.js';

/**
 * Generated tokens a hold may count at most: more than any route answers by far, and small
 * enough that a hold's cost stays a safe integer (`n: 1e308` made the product Infinity, which
 * JSON writes as null and the internal API refused, with every request batched beside it).
 */
const MOST_GENERATED = 1_000_000_000;
/** The gateway's body limit is far below this. */
const MOST_CHARACTERS = 1_000_000_000;

const bounded = (value: number, least: number, most: number): number =>
  Number.isNaN(value) ? most : Math.min(most, Math.max(least, Math.ceil(value)));

/** The request with its figures bounded, so that any body a caller sends makes a request the control plane can decide. */
export function fitAdmission(request: AdmissionRequest): AdmissionRequest {
  const { boundCharacters, maxGenerated } = request;
  if (
    Number.isSafeInteger(boundCharacters) &&
    boundCharacters >= 0 &&
    boundCharacters <= MOST_CHARACTERS &&
    Number.isSafeInteger(maxGenerated) &&
    maxGenerated >= 1 &&
    maxGenerated <= MOST_GENERATED
  ) {
    return request;
  }
  return {
    ...request,
    boundCharacters: bounded(boundCharacters, 0, MOST_CHARACTERS),
    maxGenerated: bounded(maxGenerated, 1, MOST_GENERATED),
  };
}
