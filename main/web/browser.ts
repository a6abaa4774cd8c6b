import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

/**
 * Opening the console in Chromium's app mode: a window with no tabs or address bar, in a
 * browser profile of its own (so the user's browser, extensions and sessions stay apart).
 */

export interface Environment {
  env: NodeJS.ProcessEnv;
  platform: NodeJS.Platform;
  exists: (path: string) => boolean;
}

const here: Environment = { env: process.env, platform: process.platform, exists: existsSync };

/** Where a Chromium-family browser may be; GC_BROWSER names one explicitly. */
export function chromiumCandidates({ env, platform }: Pick<Environment, 'env' | 'platform'>): string[] {
  const explicit = env.GC_BROWSER ? [env.GC_BROWSER] : [];
  if (platform === 'darwin') {
    return [
      ...explicit,
      '/Applications/Chromium.app/Contents/MacOS/Chromium',
      '/Applications/Google Chrome.app/Contents/MacOS/Google Chrome',
      '/Applications/Microsoft Edge.app/Contents/MacOS/Microsoft Edge',
    ];
  }
  if (platform === 'win32') {
    const roots = [env.LOCALAPPDATA, env.PROGRAMFILES, env['PROGRAMFILES(X86)']].filter((r): r is string => !!r);
    return [
      ...explicit,
      ...roots.map((root) => join(root, 'Chromium', 'Application', 'chrome.exe')),
      ...roots.map((root) => join(root, 'Google', 'Chrome', 'Application', 'chrome.exe')),
      ...roots.map((root) => join(root, 'Microsoft', 'Edge', 'Application', 'msedge.exe')),
    ];
  }
  return [
    ...explicit,
    '/usr/bin/chromium',
    '/usr/bin/chromium-browser',
    '/usr/bin/google-chrome',
    '/usr/bin/google-chrome-stable',
    '/snap/bin/chromium',
  ];
}

export function findChromium(environment: Environment = here): string | null {
  return chromiumCandidates(environment).find((path) => environment.exists(path)) ?? null;
}

/** A window can be shown: always on macOS and Windows, on Linux and the BSDs when X11 or Wayland is there. */
export function hasDisplay({ env, platform }: Pick<Environment, 'env' | 'platform'> = here): boolean {
  if (platform === 'darwin' || platform === 'win32') return true;
  return Boolean(env.DISPLAY || env.WAYLAND_DISPLAY);
}

export function appModeArguments(target: string, userDataDir: string): string[] {
  return [
    `--app=${target}`,
    `--user-data-dir=${userDataDir}`,
    '--no-first-run',
    '--no-default-browser-check',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
  ];
}

/**
 * A page that sends the browser on to the console's address. The browser is given this
 * file's path rather than the address itself, so the token never appears on a command line
 * (which other users of the machine can read); the file is the owner's only.
 */
export function writeLauncherPage(dir: string, url: string): string {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const file = join(dir, 'open-console.html');
  const escaped = url.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');
  writeFileSync(
    file,
    `<!doctype html><html lang="en"><head><meta charset="utf-8">` +
      `<meta name="referrer" content="no-referrer">` +
      `<meta http-equiv="refresh" content="0;url=${escaped}">` +
      `<title>Gateway Console</title></head><body><p>Opening the console…</p></body></html>\n`,
    { mode: 0o600 },
  );
  return file;
}

export interface OpenedBrowser {
  child: ChildProcess;
  /** Closes the window (if still open) and removes the launcher page. */
  close(): void;
}

/** Opens the console in app mode, in a fresh browser profile under `dataDir`. */
export function openAppWindow(browser: string, url: string, dataDir: string): OpenedBrowser {
  const userDataDir = join(dataDir, 'browser-profile');
  rmSync(userDataDir, { recursive: true, force: true });
  mkdirSync(userDataDir, { recursive: true, mode: 0o700 });
  const launcher = writeLauncherPage(join(dataDir, 'run'), url);
  const child = spawn(browser, appModeArguments(pathToFileURL(launcher).href, userDataDir), {
    stdio: 'ignore',
  });
  return {
    child,
    close() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      rmSync(launcher, { force: true });
    },
  };
}
