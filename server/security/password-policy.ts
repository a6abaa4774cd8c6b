import { invalid } from '../http-errors.js';

/**
 * What a new password must be (OWASP ASVS 5.0 V6.2): long enough and not a commonly used one.
 * Nothing else: no composition rules (V6.2.5), and it is taken whole, neither trimmed nor
 * truncated (V6.2.7), since each of those would steer people towards weaker passwords.
 */

/** The contract's minimum (decisions.md: 8 to 256) and ASVS V6.2.1's. */
export const PASSWORD_MIN_LENGTH_DEFAULT = 8;
/** V6.2.9 requires 64-character passwords to be allowed, so no minimum may exceed it. */
export const PASSWORD_MIN_LENGTH_HIGHEST = 64;

/** Refuses a configured minimum the contract or ASVS would not allow, before the server starts. */
export function checkPasswordMinLength(value: number): void {
  if (!Number.isInteger(value) || value < PASSWORD_MIN_LENGTH_DEFAULT || value > PASSWORD_MIN_LENGTH_HIGHEST) {
    throw new Error(
      `SVC_PASSWORD_MIN_LENGTH must be an integer from ${PASSWORD_MIN_LENGTH_DEFAULT} to ${PASSWORD_MIN_LENGTH_HIGHEST}, not ${value}`,
    );
  }
}

/** Case and compatibility forms (full-width letters, ligatures) must not slip a listed password through. */
const comparable = (password: string) => password.normalize('NFKC').toLowerCase();

/** Characters as the schema's `minLength` counts them: code points, so an emoji is one. */
const lengthOf = (password: string) => [...password].length;

let common: Promise<ReadonlySet<string>> | null = null;

/**
 * The whole list zxcvbn-ts maintains (about 49,000 entries, well beyond V6.2.4's top 3,000),
 * loaded at the first registration rather than at start: decompressing it takes some 50 ms
 * and 3 MB that a server nobody registers on never needs. Only entries that pass the length
 * rule can decide anything, so only those (about 18,000) go into the set.
 */
function commonPasswords(): Promise<ReadonlySet<string>> {
  common ??= import('@zxcvbn-ts/language-common').then(
    ({ dictionary }) => {
      const kept = new Set<string>();
      for (const entry of dictionary['passwords-common']) {
        const normal = comparable(entry);
        if (lengthOf(normal) >= PASSWORD_MIN_LENGTH_DEFAULT) kept.add(normal);
      }
      return kept;
    },
    (error: unknown) => {
      // A failed load refuses this registration (500) without refusing every later one.
      common = null;
      throw error;
    },
  );
  return common;
}

/**
 * Throws the 422 a schema failure of the password would give (`loc` names the field, so the
 * console shows it there) when `password` breaks the policy. The messages never quote it.
 */
export async function checkNewPassword(password: string, minLength: number): Promise<void> {
  if (lengthOf(password) < minLength) {
    throw invalid({ loc: ['body', 'password'], msg: `must be at least ${minLength} characters`, type: 'minLength' });
  }
  if ((await commonPasswords()).has(comparable(password))) {
    throw invalid({
      loc: ['body', 'password'],
      msg: 'must not be a commonly used password (one found on lists of leaked passwords)',
      type: 'common_password',
    });
  }
}
