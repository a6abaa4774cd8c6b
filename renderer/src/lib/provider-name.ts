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

/**
 * The catalogue's provider for the service's own global routes (`svc/auto`, `svc/fast`…,
 * decisions.md "Model catalogue"): the gateway spreads them over its own upstream keys, so
 * no customer key can serve them and the vault has nothing to store for it.
 */
export const SERVICE_PROVIDER = 'svc';

/** Providers to suggest for a new vault key: those in the catalogue that take one and have none yet. */
export function providerSuggestions(
  catalogue: readonly { provider: string }[] | null,
  stored: readonly { provider: string }[],
): string[] {
  const providers = new Set((catalogue ?? []).map((m) => m.provider));
  return [...providers].filter((p) => p !== SERVICE_PROVIDER && !stored.some((k) => k.provider === p));
}
