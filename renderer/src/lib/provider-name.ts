/**
 * A vault provider name as the server accepts it: server/schemas/vault.ts PROVIDER_PATTERN,
 * repeated here because the renderer imports no server code, only its types.
 */
export const PROVIDER_NAME = /^[a-z0-9][a-z0-9_-]{0,63}$/;

/** Null when the name is acceptable; else what is wrong with it, in words. */
export function providerNameError(name: string): string | null {
  if (name === '') return 'enter the provider’s name, such as openai';
  if (name.length > 64) return 'a provider name has at most 64 characters';
  if (/[^A-Za-z0-9_-]/.test(name)) return 'use only lower-case letters, digits, “-” and “_”';
  if (/[A-Z]/.test(name)) return 'use lower-case letters only';
  if (!PROVIDER_NAME.test(name)) return 'a provider name starts with a lower-case letter or a digit';
  return null;
}
