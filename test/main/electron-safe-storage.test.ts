import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import * as electron from './fakes/electron.js';
import { ConsoleError } from '../../main/core/errors.js';
import {
  EncryptionUnavailableError,
  NO_SECURE_STORAGE,
  SealedProfileStore,
  safeStorageBox,
} from '../../main/electron/safe-storage-box.js';

vi.mock('electron', () => import('./fakes/electron.js'));

let dir: string;
beforeEach(() => {
  electron.reset();
  dir = mkdtempSync(join(tmpdir(), 'console-safe-storage-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('the safeStorage SecretBox', () => {
  it('round-trips any bytes, and what it seals is not the plaintext', () => {
    const box = safeStorageBox();
    const plain = Buffer.concat([Buffer.from('{"cookies":[{"key":"svc_refresh_token"}]}'), Buffer.from([0, 255, 128])]);
    const sealed = box.seal(plain);
    expect(sealed.includes(Buffer.from('svc_refresh_token'))).toBe(false);
    expect(box.open(sealed).equals(plain)).toBe(true);
  });

  it('refuses to seal or open when encryption is unavailable, saying why', () => {
    const box = safeStorageBox();
    const sealed = box.seal(Buffer.from('jar'));
    electron.safeStorage.available = false;
    expect(box.available()).toBe(false);
    expect(() => box.seal(Buffer.from('jar'))).toThrow(EncryptionUnavailableError);
    expect(() => box.open(sealed)).toThrow(EncryptionUnavailableError);
    try {
      box.seal(Buffer.from('jar'));
    } catch (error) {
      expect(error).toBeInstanceOf(ConsoleError);
      expect((error as ConsoleError).toBody()).toEqual({ status: 503, message: NO_SECURE_STORAGE });
    }
  });

  it.runIf(process.platform === 'linux')("counts Linux's basic_text backend (a hard-coded key) as unavailable", () => {
    electron.safeStorage.backend = 'basic_text';
    const box = safeStorageBox();
    expect(box.available()).toBe(false);
    expect(() => box.seal(Buffer.from('jar'))).toThrow(EncryptionUnavailableError);
  });
});

describe('the Electron shell profile store', () => {
  const addSignedInProfile = async (store: SealedProfileStore) => {
    const profile = store.add({ name: 'Prod', kind: 'remote', baseUrl: 'https://console.example.com/api' });
    await store
      .jar(profile.id)
      .setCookie(
        'svc_refresh_token=secret-value; Path=/api/auth; Secure; HttpOnly',
        'https://console.example.com/api/auth/refresh',
      );
    return profile;
  };

  it('writes jars sealed, and reads them back', async () => {
    const onRefused = vi.fn();
    const store = new SealedProfileStore(dir, safeStorageBox(), onRefused);
    const profile = await addSignedInProfile(store);
    store.saveJar(profile.id);
    const onDisk = readFileSync(join(dir, 'jars', `${profile.id}.jar`));
    expect(onDisk.includes(Buffer.from('secret-value'))).toBe(false);
    const reopened = new SealedProfileStore(dir, safeStorageBox(), onRefused);
    const cookies = await reopened.jar(profile.id).getCookies('https://console.example.com/api/auth/refresh');
    expect(cookies.map((c) => c.value)).toEqual(['secret-value']);
    expect(onRefused).not.toHaveBeenCalled();
  });

  it('keeps jars in memory only, and says so once, when encryption is unavailable', async () => {
    electron.safeStorage.available = false;
    const onRefused = vi.fn();
    const store = new SealedProfileStore(dir, safeStorageBox(), onRefused);
    const profile = await addSignedInProfile(store);
    store.saveJar(profile.id);
    store.saveJar(profile.id);
    expect(existsSync(join(dir, 'jars', `${profile.id}.jar`))).toBe(false);
    expect(onRefused).toHaveBeenCalledExactlyOnceWith(NO_SECURE_STORAGE);
    // Still signed in for this launch.
    const cookies = await store.jar(profile.id).getCookies('https://console.example.com/api/auth/refresh');
    expect(cookies).toHaveLength(1);
    // profiles.json holds no secret and is still written.
    expect(readFileSync(join(dir, 'profiles.json'), 'utf8')).not.toContain('secret-value');
  });
});
