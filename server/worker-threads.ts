import { createRequire } from 'node:module';
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
