import { spawnSync } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build as esbuild } from 'esbuild';

/**
 * `npm run build`: everything the app runs from once compiled, into dist/ (or --out-dir):
 *
 *   dist/renderer/                 the renderer (vite build)
 *   dist/server/**.js              server/ compiled by tsc (tsconfig.build.json), the source tree's
 *   dist/main/**.js                shape kept, so relative imports and import.meta.url-relative files
 *                                  resolve as from source; `node dist/server/cli.js serve` runs it
 *   dist/server/**\/migrations/*.sql  the stores' migrations, read at run time next to their modules
 *   dist/main/electron/preload.cjs the Electron preload bundled into one CommonJS file (a sandboxed
 *                                  preload cannot load modules of its own)
 *   dist/package.json              the nearest package.json of the compiled code: ES modules, and
 *                                  the package's `imports` aliases (#server/…) aimed at dist/
 *
 * package.json "main" is dist/main/electron/main.js, so `electron .` runs the built shell.
 *
 * Flags: --out-dir DIR (default dist; keep it inside the project, so that the compiled
 * code's bare imports find node_modules), --no-renderer (skip vite), --renderer-only.
 */

export const ROOT = fileURLToPath(new URL('../', import.meta.url));
const require = createRequire(import.meta.url);
const say = (line: string) => process.stdout.write(`${line}\n`);

export interface BuildOptions {
  /** Where to build; dist/ by default. */
  outDir?: string;
  renderer?: boolean;
  code?: boolean;
  /** Output of the tools: 'inherit' shows it, 'pipe' keeps it for the error message. */
  stdio?: 'inherit' | 'pipe';
}

const RENDERER_SOURCES = [join(ROOT, 'renderer'), join(ROOT, 'vite.config.ts')];
const RENDERER_BUILD = join(ROOT, 'dist', 'renderer', 'index.html');
const CODE_SOURCES = ['server', 'main', 'tsconfig.json', 'tsconfig.build.json'].map((path) => join(ROOT, path));
const CODE_BUILD = [
  join(ROOT, 'dist', 'main', 'web', 'main.js'),
  join(ROOT, 'dist', 'main', 'electron', 'main.js'),
  join(ROOT, 'dist', 'main', 'electron', 'preload.cjs'),
  join(ROOT, 'dist', 'server', 'cli.js'),
];

/** The newest modification time under `path` (a file or a folder), 0 when it is missing. */
function newest(path: string): number {
  let info;
  try {
    info = statSync(path);
  } catch {
    return 0;
  }
  if (!info.isDirectory()) return info.mtimeMs;
  let latest = info.mtimeMs;
  for (const entry of readdirSync(path)) {
    if (entry === 'node_modules' || entry.startsWith('.')) continue;
    latest = Math.max(latest, newest(join(path, entry)));
  }
  return latest;
}

/** Why dist/renderer must be built (`npm start`, the console bench), or null when it is up to date. */
export function rendererBuildReason(): string | null {
  if (!existsSync(RENDERER_BUILD)) return 'the console page has not been built yet';
  const built = statSync(RENDERER_BUILD).mtimeMs;
  if (Math.max(...RENDERER_SOURCES.map(newest)) > built) return 'the console page is older than its sources';
  return null;
}

/** Why server/ and main/ must be compiled into dist/ for either shell, or null when it is up to date. */
export function codeBuildReason(): string | null {
  if (CODE_BUILD.some((file) => !existsSync(file))) return 'the app has not been compiled yet';
  const built = Math.min(...CODE_BUILD.map((file) => statSync(file).mtimeMs));
  if (Math.max(...CODE_SOURCES.map(newest)) > built) return 'the compiled app is older than its sources';
  return null;
}

/** Runs a Node script of a dev dependency with this Node; throws with its output when it fails. */
function runTool(script: string, args: string[], stdio: 'inherit' | 'pipe'): void {
  const result = spawnSync(process.execPath, [script, ...args], { cwd: ROOT, stdio, encoding: 'utf8' });
  if (result.status !== 0) {
    const output = stdio === 'pipe' ? `\n${result.stdout ?? ''}${result.stderr ?? ''}` : '';
    throw new Error(`${relative(ROOT, script)} ${args.join(' ')} failed (${result.status ?? result.signal})${output}`);
  }
}

function toolBin(pkg: string, bin: string): string {
  return join(dirname(require.resolve(`${pkg}/package.json`)), bin);
}

export function buildRenderer(outDir: string, stdio: 'inherit' | 'pipe' = 'inherit'): void {
  runTool(
    toolBin('vite', 'bin/vite.js'),
    ['build', '--logLevel', 'warn', '--outDir', join(outDir, 'renderer'), '--emptyOutDir'],
    stdio,
  );
}

/** Every file under `dir` whose name passes `keep`, as paths relative to `dir`. */
function filesUnder(dir: string, keep: (name: string, path: string) => boolean): string[] {
  const found: string[] = [];
  for (const entry of readdirSync(dir)) {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) found.push(...filesUnder(path, keep).map((p) => join(entry, p)));
    else if (keep(entry, path)) found.push(entry);
  }
  return found;
}

/**
 * The compiled tree's own package.json. Node reads a module's type and its `#…` imports from the
 * nearest package.json; the root one maps `#server/*` to the TypeScript sources, this one maps
 * the same names into the compiled tree beside it (the same relative paths, now under dist/).
 */
function compiledPackage(): { type: 'module'; imports: Record<string, string> } {
  const root = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { imports: Record<string, string> };
  const imports: Record<string, string> = {};
  for (const [name, target] of Object.entries(root.imports)) imports[name] = target.replace(/\.ts$/, '.js');
  return { type: 'module', imports };
}

/**
 * server/ and main/ compiled into `outDir`. `typeCheck: false` (the console bench) skips tsc's type
 * checking, half its time: with isolatedModules the JavaScript emitted is the same, and
 * `npm run typecheck` checks the types.
 */
export async function buildCode(
  outDir: string,
  stdio: 'inherit' | 'pipe' = 'inherit',
  options: { typeCheck?: boolean } = {},
): Promise<void> {
  // Compiled files of removed sources must not linger.
  for (const folder of ['server', 'main']) rmSync(join(outDir, folder), { recursive: true, force: true });

  const check = options.typeCheck === false ? ['--noCheck'] : [];
  runTool(
    toolBin('typescript', 'bin/tsc'),
    ['-p', join(ROOT, 'tsconfig.build.json'), '--outDir', outDir, ...check],
    stdio,
  );

  writeFileSync(join(outDir, 'package.json'), `${JSON.stringify(compiledPackage(), null, 2)}\n`);

  // server/**/migrations/*.sql next to the compiled stores.
  const server = join(ROOT, 'server');
  for (const file of filesUnder(server, (name, path) => name.endsWith('.sql') && /[\\/]migrations[\\/]/.test(path))) {
    const target = join(outDir, 'server', file);
    mkdirSync(dirname(target), { recursive: true });
    copyFileSync(join(server, file), target);
  }

  await esbuild({
    entryPoints: [join(ROOT, 'main', 'electron', 'preload.ts')],
    outfile: join(outDir, 'main', 'electron', 'preload.cjs'),
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    external: ['electron'],
    sourcemap: true,
    logLevel: 'warning',
  });
}

export async function build(options: BuildOptions = {}): Promise<void> {
  const outDir = resolve(ROOT, options.outDir ?? 'dist');
  const stdio = options.stdio ?? 'inherit';
  if (options.renderer ?? true) {
    say('Building the renderer (vite)…');
    buildRenderer(outDir, stdio);
  }
  if (options.code ?? true) {
    say('Compiling server/ and main/ (tsc), copying migrations, bundling the preload (esbuild)…');
    await buildCode(outDir, stdio);
  }
  say(`Built into ${relative(ROOT, outDir) || '.'}/`);
}

function parseArgs(argv: string[]): BuildOptions {
  const options: BuildOptions = {};
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--out-dir' && argv[i + 1]) options.outDir = argv[++i];
    else if (arg?.startsWith('--out-dir=')) options.outDir = arg.slice('--out-dir='.length);
    else if (arg === '--no-renderer') options.renderer = false;
    else if (arg === '--renderer-only') options.code = false;
    else throw new Error(`unknown argument ${arg ?? ''} (--out-dir DIR, --no-renderer, --renderer-only)`);
  }
  return options;
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  try {
    await build(parseArgs(process.argv.slice(2)));
  } catch (error) {
    process.stderr.write(`Build failed: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  }
}
