import { createRequire } from 'node:module';
import { getPriority, setPriority } from 'node:os';
import { pathToFileURL } from 'node:url';
import { Worker, type WorkerOptions } from 'node:worker_threads';

/** A worker entry beside the module at `base`: TypeScript run from source, JavaScript once built. */
export function workerUrl(name: string, base: string): URL {
  return new URL(base.endsWith('.ts') ? `./${name}.ts` : `./${name}.js`, base);
}

/**
 * Run from source (tsx, Vitest) the worker is TypeScript. On Node 20 tsx registers its
 * loader in the main thread only (privatenumber/tsx#354), so a small bootstrap
 * registers it inside the worker before importing the entry. Built code starts as is.
 */
export function startWorker(url: URL, options: WorkerOptions): Worker {
  if (!url.pathname.endsWith('.ts')) return new Worker(url, options);
  const tsxApi = pathToFileURL(createRequire(import.meta.url).resolve('tsx/esm/api')).href.replace(/\.cjs$/, '.mjs');
  const bootstrap = `import(${JSON.stringify(tsxApi)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(url.href)}); });`;
  return new Worker(bootstrap, { ...options, eval: true });
}

/**
 * Runs the calling thread `steps` nice steps below the one that started it, for threads whose
 * work can wait a little (analytics queries, the gateway's row writing) when they and the
 * event loop's thread want the same core. On Linux a thread has a nice value of its own, and
 * thread 0 is the calling one (elsewhere it would be the whole process's, so nothing is done).
 * Relative to the value the thread started with, the server's: an absolute one could raise a
 * server started at a higher nice value above itself.
 */
export function lowerThisThreadsPriority(steps: number): void {
  if (process.platform !== 'linux') return;
  try {
    setPriority(0, Math.min(19, getPriority(0) + steps));
  } catch {
    // Lowering a thread's own priority is allowed; a sandbox that refuses it leaves the
    // thread at the server's.
  }
}
