import { randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Where the embedded server listens: a socket only the console's user can open, never a TCP
 * port (any local user can connect to 127.0.0.1, and the demo's passwords are published).
 *
 * - POSIX: `control.sock` in the server's data folder, which the server makes 0700 before it
 *   listens (then it makes the socket 0600 too). A socket's path must fit `sun_path`: 104
 *   bytes on macOS and the BSDs, 108 on Linux, with the terminating NUL. A data folder deep
 *   enough to exceed that gets a fresh folder from mkdtemp under the temporary folder instead
 *   (mkdtemp makes it 0700, narrowed again in case), one per start, removed when the server
 *   has gone. A host killed outright leaves that empty folder behind; nothing can reach
 *   through it.
 * - Windows: a named pipe. Pipes have no folder; a pipe's default DACL grants full control to
 *   its creator, LocalSystem and administrators only (Everyone and anonymous get read at most,
 *   which cannot open the pipe for a request), and the unguessable name, new at every start,
 *   keeps others from creating it first.
 */

export const SOCKET_FILE = 'control.sock';
/** The longest socket path every POSIX platform takes: macOS's 104 bytes less the NUL. */
export const MAX_SOCKET_PATH_BYTES = 103;

export interface SocketPlace {
  /** What the server is given as `--socket`. */
  readonly path: string;
  /** Removes what was made for this start (the temporary folder); the server removes its socket. */
  release(): void;
}

export function socketPlace(dataDir: string, platform: NodeJS.Platform = process.platform): SocketPlace {
  if (platform === 'win32') return { path: `\\\\.\\pipe\\gateway-console-${randomBytes(16).toString('hex')}`, release };
  const inDataDir = join(dataDir, SOCKET_FILE);
  if (fits(inDataDir)) return { path: inDataDir, release };
  const folder = mkdtempSync(join(tmpdir(), 'gateway-console-'));
  const place = { path: join(folder, SOCKET_FILE), release: () => rmSync(folder, { recursive: true, force: true }) };
  try {
    chmodSync(folder, 0o700);
    if (!fits(place.path)) throw new Error(`the temporary folder's path is too long for a socket: ${place.path}`);
  } catch (error) {
    place.release();
    throw error;
  }
  return place;
}

function fits(path: string): boolean {
  return Buffer.byteLength(path) <= MAX_SOCKET_PATH_BYTES;
}

function release(): void {}
