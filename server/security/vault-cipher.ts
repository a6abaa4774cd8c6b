import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

const NONCE_BYTES = 12;
const TAG_BYTES = 16;

/** Binds a sealed provider key to its organisation and provider, so a row copied elsewhere fails to open. */
function associatedData(orgId: string, provider: string): Buffer {
  return Buffer.from(`${orgId}\u0000${provider}`, 'utf8');
}

/** AES-256-GCM with a fresh random nonce per write. Returns nonce || tag || ciphertext. */
export function sealProviderKey(masterKey: Buffer, orgId: string, provider: string, plaintext: string): Buffer {
  const nonce = randomBytes(NONCE_BYTES);
  const cipher = createCipheriv('aes-256-gcm', masterKey, nonce);
  cipher.setAAD(associatedData(orgId, provider));
  const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return Buffer.concat([nonce, cipher.getAuthTag(), body]);
}

export function openProviderKey(masterKey: Buffer, orgId: string, provider: string, sealed: Buffer): string {
  const decipher = createDecipheriv('aes-256-gcm', masterKey, sealed.subarray(0, NONCE_BYTES));
  decipher.setAAD(associatedData(orgId, provider));
  decipher.setAuthTag(sealed.subarray(NONCE_BYTES, NONCE_BYTES + TAG_BYTES));
  return Buffer.concat([decipher.update(sealed.subarray(NONCE_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
}
