import { safeStorage } from 'electron';
import { ConsoleError } from '../core/errors.js';
import { ProfileStore, type SecretBox } from '../core/profiles.js';

export const NO_SECURE_STORAGE =
  'This system offers no secure storage (on Linux, a keyring such as GNOME Keyring or KWallet), ' +
  'so sign-ins last until the console closes and are not saved to disk.';

/** Refusal to seal: a ConsoleError, so a call that reaches it tells the user why (503) instead of failing blankly. */
export class EncryptionUnavailableError extends ConsoleError {
  constructor() {
    super(503, NO_SECURE_STORAGE);
    this.name = 'EncryptionUnavailableError';
  }
}

export interface SafeStorageBox extends SecretBox {
  /** Whether jars can be sealed on this system now. */
  available(): boolean;
}

/**
 * Cookie jars sealed with Electron's safeStorage (the OS key store: Keychain, DPAPI, libsecret
 * or KWallet). Never writes plaintext: seal and open refuse when encryption is unavailable, and
 * on Linux the "basic_text" backend (a hard-coded key) counts as unavailable, since it protects
 * nothing. safeStorage's string API is fed base64 so that any bytes round-trip.
 *
 * Electron 45 deprecates the synchronous isEncryptionAvailable, encryptString and decryptString
 * used here (each logs a deprecation warning once; they still work) for
 * isAsyncEncryptionAvailable, encryptStringAsync and decryptStringAsync, and removes them in 46
 * (electron/electron#53670, #53662). SecretBox (main/core/profiles.ts) is synchronous, so moving
 * needs an asynchronous box in the core, or a data key sealed once with the asynchronous API
 * that then seals jars synchronously. Either must land before Electron 46. Jars sealed by
 * encryptString open with decryptStringAsync, so no saved sign-in is lost.
 */
export function safeStorageBox(): SafeStorageBox {
  const available = (): boolean =>
    safeStorage.isEncryptionAvailable() &&
    (process.platform !== 'linux' || safeStorage.getSelectedStorageBackend() !== 'basic_text');
  return {
    available,
    seal(plain) {
      if (!available()) throw new EncryptionUnavailableError();
      return safeStorage.encryptString(plain.toString('base64'));
    },
    open(sealed) {
      if (!available()) throw new EncryptionUnavailableError();
      return Buffer.from(safeStorage.decryptString(sealed), 'base64');
    },
  };
}

/**
 * The profile store of the Electron shell: when the box cannot seal, jars stay in memory for
 * this launch (sessions keep working) and `onRefused` is told once, so the shell can say so to
 * the user; nothing is written in clear.
 */
export class SealedProfileStore extends ProfileStore {
  private refusalReported = false;

  constructor(
    dir: string,
    private readonly sealer: SafeStorageBox,
    private readonly onRefused: (message: string) => void,
  ) {
    super(dir, sealer);
  }

  override saveJar(id: string): void {
    if (!this.sealer.available()) {
      if (!this.refusalReported) {
        this.refusalReported = true;
        this.onRefused(NO_SECURE_STORAGE);
      }
      return;
    }
    super.saveJar(id);
  }
}
