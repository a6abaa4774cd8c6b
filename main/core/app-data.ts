import { homedir } from 'node:os';
import { posix, win32 } from 'node:path';

/** The platform's folder for an application's data, e.g. ~/.local/share/<appName> on Linux. */
export function appDataDir(
  appName: string,
  where: { platform?: NodeJS.Platform; env?: NodeJS.ProcessEnv; home?: string } = {},
): string {
  const platform = where.platform ?? process.platform;
  const env = where.env ?? process.env;
  const home = where.home ?? homedir();
  if (platform === 'win32') return win32.join(env.APPDATA || win32.join(home, 'AppData', 'Roaming'), appName);
  if (platform === 'darwin') return posix.join(home, 'Library', 'Application Support', appName);
  const xdg = env.XDG_DATA_HOME;
  // The XDG specification says a relative path is invalid and is to be ignored.
  return posix.join(xdg && posix.isAbsolute(xdg) ? xdg : posix.join(home, '.local', 'share'), appName);
}
