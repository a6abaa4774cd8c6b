import type { Worker } from 'node:worker_threads';
import { startWorker, workerUrl } from '../worker-threads.js';
import type { Analytics } from './analytics.js';
import type { AnalyticsQuery, AnalyticsResult } from './query-types.js';
import type { WorkerData, WorkerJob, WorkerReply } from './worker.js';

/** Mirrors worker.ts's WORKER_READY without importing the worker module (and its side effects) here. */
const WORKER_READY = 'ready';

/** The telemetry store could not answer in time, or at all: analytics say 503 while the rest of the API goes on. */
export class AnalyticsUnavailable extends Error {}

export interface PoolLimits {
  /** Worker threads, each with its own read-only connection. */
  size: number;
  /** A job still running after this long has its worker replaced and answers 503. */
  timeoutMs: number;
  /** Jobs waiting beyond this many answer 503 at once instead of queueing without bound. */
  maxQueued: number;
}

interface Job {
  id: number;
  query: AnalyticsQuery;
  resolve: (value: unknown) => void;
  reject: (error: Error) => void;
  signal?: AbortSignal;
  dropIfAborted?: () => void;
}

interface Slot {
  worker: Worker;
  ready: boolean;
  job: Job | null;
  deadline: NodeJS.Timeout | null;
}

const WORKER_URL = workerUrl('worker', import.meta.url);

/**
 * How many nice steps the analytics threads run below the server. When the event loop's
 * thread and a worker want the same core, the loop gets ~70 % of it: under four summaries at a time (1M rows),
 * GET /keys p99 went from 1.7-2.0× its idle p99 to 1.4-1.6×, and the summaries' throughput
 * down by ~40 % while the load generator ran on the same two cores. Linux only.
 */
export const ANALYTICS_NICE = 4;

/**
 * Analytics queries run in worker threads with their own read-only connections, so a
 * heavy summary never stalls the event loop that serves sessions and keys. Each worker
 * runs one job at a time from a bounded queue; a job whose caller has gone is dropped
 * before it starts; a job past its deadline has its worker terminated and replaced, so
 * slow queries cannot hold the pool for good.
 */
export class AnalyticsPool implements Analytics {
  private readonly slots: (Slot | null)[];
  private readonly queue: Job[] = [];
  private nextId = 1;

  constructor(
    private readonly path: string,
    private readonly limits: PoolLimits,
  ) {
    this.slots = Array.from({ length: limits.size }, () => null);
  }

  /** Runs `query`; `signal` drops it while it still waits (its caller disconnected). */
  run<Q extends AnalyticsQuery>(query: Q, signal?: AbortSignal): Promise<AnalyticsResult<Q>> {
    if (signal?.aborted) return Promise.reject(new AnalyticsUnavailable('the caller went away'));
    if (this.queue.length >= this.limits.maxQueued) {
      return Promise.reject(new AnalyticsUnavailable('too many analytics queries are waiting'));
    }
    return new Promise((resolve, reject) => {
      const job: Job = { id: this.nextId++, query, resolve: resolve as (value: unknown) => void, reject, signal };
      if (signal) {
        job.dropIfAborted = () => {
          const waiting = this.queue.indexOf(job);
          if (waiting < 0) return;
          this.queue.splice(waiting, 1);
          reject(new AnalyticsUnavailable('the caller went away'));
        };
        signal.addEventListener('abort', job.dropIfAborted, { once: true });
      }
      this.queue.push(job);
      this.dispatch();
    });
  }

  /**
   * Starts every worker now rather than at the first queries: from source a worker takes about
   * a second to load, which the first analytics screen after a server's start would wait for.
   * Each runs the first screens of `orgIds` once before it takes jobs (warm-up.ts); a worker
   * started later in place of one does not, so that jobs waiting for it wait no longer.
   */
  warm(orgIds: readonly string[] = []): void {
    for (let i = 0; i < this.slots.length; i++) this.slots[i] ??= this.spawn(orgIds);
  }

  async close(): Promise<void> {
    for (const job of this.queue.splice(0)) job.reject(new AnalyticsUnavailable('the server is stopping'));
    await Promise.all(
      this.slots.map((slot) => {
        if (slot?.deadline) clearTimeout(slot.deadline);
        return slot?.worker.terminate();
      }),
    );
    this.slots.fill(null);
  }

  private dispatch(): void {
    for (let i = 0; i < this.slots.length && this.queue.length > 0; i++) {
      const slot = this.slots[i] ?? (this.slots[i] = this.spawn());
      if (slot.ready && !slot.job) this.start(slot, this.queue.shift()!);
    }
  }

  private start(slot: Slot, job: Job): void {
    // Once running, a job finishes or meets its deadline: SQLite cannot be interrupted mid-query here.
    if (job.dropIfAborted) job.signal?.removeEventListener('abort', job.dropIfAborted);
    slot.job = job;
    slot.deadline = setTimeout(
      () => this.retire(slot, new AnalyticsUnavailable('the analytics query ran past its time limit')),
      this.limits.timeoutMs,
    );
    slot.worker.postMessage({ id: job.id, query: job.query } satisfies WorkerJob);
  }

  private finish(slot: Slot, reply: WorkerReply): void {
    const job = slot.job;
    if (!job || job.id !== reply.id) return;
    if (slot.deadline) clearTimeout(slot.deadline);
    slot.job = null;
    slot.deadline = null;
    if (reply.ok) job.resolve(reply.result);
    else job.reject(reply.unavailable ? new AnalyticsUnavailable(reply.message) : new Error(reply.message));
    this.dispatch();
  }

  /** Ends a worker (stuck or dead), fails its job, and lets a fresh one take the queue. */
  private retire(slot: Slot, error: Error): void {
    const index = this.slots.indexOf(slot);
    if (index < 0) return;
    this.slots[index] = null;
    if (slot.deadline) clearTimeout(slot.deadline);
    const job = slot.job;
    slot.job = null;
    void slot.worker.terminate();
    job?.reject(error);
    this.dispatch();
  }

  private spawn(warmOrgIds: readonly string[] = []): Slot {
    const worker = startWorker(WORKER_URL, {
      workerData: { path: this.path, nice: ANALYTICS_NICE, warmOrgIds: [...warmOrgIds] } satisfies WorkerData,
    });
    const slot: Slot = { worker, ready: false, job: null, deadline: null };
    worker.on('message', (reply: WorkerReply | typeof WORKER_READY) => {
      if (reply !== WORKER_READY) return this.finish(slot, reply);
      slot.ready = true;
      this.dispatch();
    });
    worker.on('error', (error) => this.retire(slot, error));
    worker.on('exit', (code) => this.retire(slot, new Error(`analytics worker exited with code ${code}`)));
    worker.unref();
    return slot;
  }
}
