import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { Worker, type WorkerOptions } from 'node:worker_threads';
import type { AnalyticsQuery, AnalyticsResult } from './queries.js';
import type { WorkerJob, WorkerReply } from './worker.js';

/** The telemetry store could not answer: analytics say 503 while the rest of the API goes on. */
export class AnalyticsUnavailable extends Error {}

interface Pending {
  resolve: (value: unknown) => void;
  reject: (error: Error) => void;
}

interface Slot {
  worker: Worker;
  pending: Map<number, Pending>;
}

const WORKER_URL = new URL(import.meta.url.endsWith('.ts') ? './worker.ts' : './worker.js', import.meta.url);

/**
 * Analytics queries run in worker threads with their own read-only connections, so a
 * heavy summary never stalls the event loop that serves sessions and keys. Jobs go to
 * the least busy worker; a worker that dies fails its jobs and is replaced on next use.
 */
export class AnalyticsPool {
  private readonly slots: (Slot | null)[];
  private nextId = 1;

  constructor(
    private readonly path: string,
    size: number,
  ) {
    this.slots = Array.from({ length: size }, () => null);
  }

  run<Q extends AnalyticsQuery>(query: Q): Promise<AnalyticsResult<Q>> {
    const slot = this.leastBusy();
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      slot.pending.set(id, { resolve: resolve as (value: unknown) => void, reject });
      slot.worker.postMessage({ id, query } satisfies WorkerJob);
    });
  }

  async close(): Promise<void> {
    await Promise.all(this.slots.map((slot) => slot?.worker.terminate()));
    this.slots.fill(null);
  }

  private leastBusy(): Slot {
    let best = 0;
    for (let i = 0; i < this.slots.length; i++) {
      const slot = this.slots[i];
      if (!slot) return (this.slots[i] = this.spawn(i));
      if (slot.pending.size < this.slots[best]!.pending.size) best = i;
    }
    return this.slots[best]!;
  }

  private spawn(index: number): Slot {
    const worker = startWorker(WORKER_URL, { workerData: { path: this.path } });
    const slot: Slot = { worker, pending: new Map() };
    worker.on('message', (reply: WorkerReply) => {
      const pending = slot.pending.get(reply.id);
      if (!pending) return;
      slot.pending.delete(reply.id);
      if (reply.ok) pending.resolve(reply.result);
      else pending.reject(reply.unavailable ? new AnalyticsUnavailable(reply.message) : new Error(reply.message));
    });
    const fail = (error: Error) => {
      if (this.slots[index] === slot) this.slots[index] = null;
      for (const pending of slot.pending.values()) pending.reject(error);
      slot.pending.clear();
    };
    worker.on('error', fail);
    worker.on('exit', (code) => fail(new Error(`analytics worker exited with code ${code}`)));
    worker.unref();
    return slot;
  }
}

/**
 * Run from source (tsx, Vitest) the worker is TypeScript. On Node 20 tsx registers its
 * loader in the main thread only (privatenumber/tsx#354), so a small bootstrap
 * registers it inside the worker before importing the entry. Built code starts as is.
 */
function startWorker(url: URL, options: WorkerOptions): Worker {
  if (!url.pathname.endsWith('.ts')) return new Worker(url, options);
  const tsxApi = pathToFileURL(createRequire(import.meta.url).resolve('tsx/esm/api')).href.replace(/\.cjs$/, '.mjs');
  const bootstrap = `import(${JSON.stringify(tsxApi)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(url.href)}); });`;
  return new Worker(bootstrap, { ...options, eval: true });
}
