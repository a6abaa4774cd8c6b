import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { buildCode, buildRenderer as runViteBuild, codeBuildReason, rendererBuildReason } from './build.js';
import type { runWebShell } from '../main/web/main.js';

/**
 * `npm start`: builds what is missing, then starts the Electron shell when its binary is
 * installed, else the web shell, and says which and why.
 *
 * The web shell runs from the TypeScript sources (tsx); the Electron shell runs the compiled
 * app (`electron .`, package.json "main": dist/main/electron/main.js), so server/ and main/
 * are compiled first when dist/ lacks them or is older than them (scripts/build.ts).
 *
 * GC_SHELL=web or GC_SHELL=electron chooses a shell instead.
 */

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const ELECTRON_ENTRY = join(ROOT, 'main', 'electron', 'main.ts');

const say = (line: string) => process.stdout.write(`${line}\n`);

function buildRenderer(): void {
  const reason = rendererBuildReason();
  if (!reason) return;
  say(`Building the console page (${reason})…`);
  try {
    runViteBuild(join(ROOT, 'dist'));
  } catch {
    process.stderr.write('Building the console page failed; see above.\n');
    process.exit(1);
  }
}

async function buildApp(): Promise<void> {
  const reason = codeBuildReason();
  if (!reason) return;
  say(`Compiling the server and the desktop host (${reason})…`);
  try {
    await buildCode(join(ROOT, 'dist'));
  } catch {
    process.stderr.write('Compiling the app failed; see above.\n');
    process.exit(1);
  }
}

/**
 * The Electron binary's path, or why there is none to run. Read from the package's path.txt,
 * not by loading the package: since Electron 42 loading it downloads a missing binary, which
 * must not happen behind the user's back (or hang on a machine without internet).
 */
function electronBinary(): { path: string } | { missing: string } {
  let packageJson: string;
  try {
    packageJson = createRequire(import.meta.url).resolve('electron/package.json');
  } catch {
    return { missing: 'the electron package is not installed' };
  }
  const folder = dirname(packageJson);
  const pathFile = join(folder, 'path.txt');
  const path = existsSync(pathFile) ? join(folder, 'dist', readFileSync(pathFile, 'utf8').trim()) : null;
  if (path === null || !existsSync(path)) {
    return { missing: 'the Electron binary is not downloaded (`npx install-electron --no` fetches it)' };
  }
  return { path };
}

function startElectron(binary: string): void {
  // `electron .` runs package.json "main", the compiled shell. Its embedded server runs with
  // this Node (GC_NODE), whose ABI the checkout's better-sqlite3 is built for.
  const child = spawn(binary, [ROOT], {
    cwd: ROOT,
    stdio: 'inherit',
    env: { ...process.env, GC_NODE: process.execPath },
  });
  const forward = (signal: NodeJS.Signals) => () => child.kill(signal);
  process.on('SIGINT', forward('SIGINT'));
  process.on('SIGTERM', forward('SIGTERM'));
  child.on('error', (error) => {
    process.stderr.write(`Could not start Electron: ${error.message}\n`);
    process.exit(1);
  });
  child.on('exit', (code, signal) => process.exit(code ?? (signal ? 0 : 1)));
}

/**
 * The web shell compiled, as the Electron shell runs: its embedded server then starts without
 * tsx compiling five hundred modules, so a new user's demo sign-in comes a second or more sooner.
 */
async function startWeb(): Promise<void> {
  await buildApp();
  const built = pathToFileURL(join(ROOT, 'dist', 'main', 'web', 'main.js')).href;
  const shell = (await import(built)) as { runWebShell: typeof runWebShell };
  await shell.runWebShell();
}

async function main(): Promise<void> {
  buildRenderer();
  const wanted = process.env.GC_SHELL;
  if (wanted && wanted !== 'web' && wanted !== 'electron') {
    process.stderr.write(`GC_SHELL must be "web" or "electron", not "${wanted}".\n`);
    process.exit(2);
  }
  if (wanted === 'web') {
    say('GC_SHELL=web: starting the web shell.');
    return startWeb();
  }
  const electron = electronBinary();
  if ('path' in electron && !existsSync(ELECTRON_ENTRY)) {
    say(`The Electron shell's entry (${ELECTRON_ENTRY}) is missing: starting the web shell.`);
    return startWeb();
  }
  if ('path' in electron) {
    say(`Electron binary found (${electron.path}): starting the Electron shell.`);
    await buildApp();
    return startElectron(electron.path);
  }
  if (wanted === 'electron') {
    process.stderr.write(`GC_SHELL=electron, but ${electron.missing}.\n`);
    process.exit(1);
  }
  say(`${electron.missing}: starting the web shell.`);
  return startWeb();
}

await main();
