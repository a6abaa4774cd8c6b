import { createHmac, hash, randomBytes, randomInt } from 'node:crypto';

/** An opaque session token: 256 random bits, base64url. */
export function newSessionToken(): string {
  return randomBytes(32).toString('base64url');
}

/** Session tokens carry 256 bits of entropy, so a plain SHA-256 is a safe lookup hash. */
export function hashSessionToken(token: string): Buffer {
  return hash('sha256', token, 'buffer');
}

/**
 * The same hash as base64 text, for in-memory lookups: the one-shot `hash` straight to
 * text is several times cheaper than a Hash object and a Buffer, and it runs on every
 * authenticated request.
 */
export function sessionTokenKey(token: string): string {
  return hash('sha256', token, 'base64');
}

const KEY_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
export const API_KEY_PREFIX = 'sk_svc_';

/** `sk_svc_` and 32 characters of [A-Za-z0-9] drawn without modulo bias (about 190 bits). */
export function newApiKeySecret(): string {
  let body = '';
  for (let i = 0; i < 32; i++) body += KEY_ALPHABET[randomInt(KEY_ALPHABET.length)];
  return API_KEY_PREFIX + body;
}

/** The part of a key that may be shown after creation. */
export function apiKeyPrefix(secret: string): string {
  return secret.slice(0, API_KEY_PREFIX.length + 8);
}

/** Keyed hash so that a stolen database alone cannot confirm a guessed key. */
export function hashApiKeySecret(secret: string, hashKey: Buffer): Buffer {
  return createHmac('sha256', hashKey).update(secret).digest();
}
