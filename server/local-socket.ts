import { chmodSync, lstatSync, rmSync, type Stats } from 'node:fs';
import { createConnection } from 'node:net';

/**
 * `serve --socket PATH`: the embedded server's door is a Unix domain socket (a named pipe on
 * Windows) instead of a TCP port. Any local user can connect to a port on 127.0.0.1; a socket
 * file is reached through its folder, and the console puts it in its data folder, which the
 * server makes 0700 (private-files.ts). The socket is made 0600 as well: Linux checks a
 * socket's own mode on connect, while macOS and the BSDs ignore it, which is why the folder
 * is what counts.
 */

/** Whether `path` is a Windows named pipe: it lives in no folder and leaves no file behind. */
export function isNamedPipe(path: string): boolean {
  return /^\\\\[.?]\\pipe\\/i.test(path);
}

/**
 * Clears the way for listening on `path`. A socket file outlives a run that was killed (a
 * clean close removes it), and would make `listen` fail with EADDRINUSE, so one that nothing
 * answers on is removed. A socket a live server answers on, and anything that is not a socket,
 * are refused instead: removing them would take another server's door, or someone's file.
 */
export async function clearStaleSocket(path: string): Promise<void> {
  if (isNamedPipe(path)) return;
  let stat: Stats;
  try {
    stat = lstatSync(path);
  } catch (error) {
    if (errorCode(error) === 'ENOENT') return;
    throw error;
  }
  if (!stat.isSocket()) throw new Error(`--socket ${path}: something that is not a socket is there; not removing it`);
  if (await answers(path)) throw new Error(`--socket ${path}: another server is listening on it`);
  rmSync(path, { force: true });
}

/** Narrows a socket just bound to its owner, as the folder around it should have already. */
export function ownerOnlySocket(path: string): void {
  if (process.platform === 'win32' || isNamedPipe(path)) return;
  chmodSync(path, 0o600);
}

/** Whether a server accepts connections on the socket at `path`; refused means it is stale. */
function answers(path: string): Promise<boolean> {
  return new Promise((resolve, reject) => {
    const probe = createConnection({ path });
    probe.once('connect', () => {
      probe.destroy();
      resolve(true);
    });
    probe.once('error', (error) => {
      probe.destroy();
      const code = errorCode(error);
      // ENOENT: removed meanwhile (by the server it belonged to, closing); nothing is in the way.
      if (code === 'ECONNREFUSED' || code === 'ENOENT') resolve(false);
      else reject(new Error(`--socket ${path}: cannot tell whether a server listens on it (${code ?? error.message})`));
    });
  });
}

function errorCode(error: unknown): string | undefined {
  const code: unknown = error instanceof Error ? Reflect.get(error, 'code') : undefined;
  return typeof code === 'string' ? code : undefined;
}
