import { badRequest } from '../http-errors.js';

export const ORGANIZATION_NAME_MAX = 255;

/**
 * Control characters, and the bidirectional formatting characters (marks, embeddings, overrides
 * such as U+202E, isolates) that can make a look-alike of another organisation's name.
 */
const HIDDEN = /[\p{Cc}\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/u;

/**
 * Trims and checks an organisation name against the rules of the contract; throws 400 when it
 * breaks one, naming `field`, the request field that carried the name (`organization_name` at
 * sign-up, `name` for a rename).
 */
export function checkOrganizationName(raw: string, field: string): string {
  const name = raw.trim();
  if (name.length === 0) throw badRequest('organization name must not be blank', { field });
  if ([...name].length > ORGANIZATION_NAME_MAX) {
    throw badRequest(`organization name must be at most ${ORGANIZATION_NAME_MAX} characters`, { field });
  }
  if (/[<>]/.test(name)) throw badRequest('organization name must not contain < or >', { field });
  if (HIDDEN.test(name)) {
    throw badRequest('organization name must not contain control or bidirectional formatting characters', { field });
  }
  return name;
}
