import { randomBytes } from 'node:crypto';
import { chmodSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Reads a 32-byte server secret from the data folder, creating it with owner-only
 * permissions on first start. A value given in configuration (base64) wins.
 */
export function loadOrCreateSecret(dataDir: string, fileName: string, configured: string | undefined): Buffer {
  if (configured) return decodeSecret(configured, fileName);
  const path = join(dataDir, fileName);
  try {
    const secret = decodeSecret(readFileSync(path, 'utf8').trim(), fileName);
    if ((statSync(path).mode & 0o077) !== 0) chmodSync(path, 0o600);
    return secret;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  const secret = randomBytes(32);
  // 'wx' fails if another process created the file meanwhile; then read theirs.
  try {
    writeFileSync(path, secret.toString('base64') + '\n', { mode: 0o600, flag: 'wx' });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    return decodeSecret(readFileSync(path, 'utf8').trim(), fileName);
  }
  return secret;
}

function decodeSecret(base64: string, name: string): Buffer {
  const secret = Buffer.from(base64, 'base64');
  if (secret.length !== 32) throw new Error(`${name} must hold 32 bytes encoded as base64`);
  return secret;
}
