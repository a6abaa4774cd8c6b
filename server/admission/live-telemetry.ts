import type { FastifyBaseLogger } from 'fastify';
import type { Worker } from 'node:worker_threads';
import type { AdmissionQuota } from '../stores/control/admission-quota.js';
import type { ControlLocation } from '../stores/control/store.js';
import type { TelemetryLocation } from '../stores/telemetry/open.js';
import { logUpgrading } from '../stores/telemetry/store.js';
import type { RequestRecord } from '../stores/telemetry/request-record.js';
import { startWorker, workerUrl } from '../worker-threads.js';
import type { ExpiryStep, FromTelemetryThread, TelemetryThreadData, ToTelemetryThread } from './telemetry-messages.js';

/** Rows kept while the telemetry store cannot be written; past this the oldest are dropped (and said so). */
const MAX_WAITING = 200_000;
/**
 * How often the holds of rows still waiting (or whose spend is owed) are said to be kept: well
 * inside the ten minutes an answered hold lasts in the database unless kept.
 */
const KEEP_MS = 2 * 60_000;
/** An import holds the write lock for minutes: a write waits this long, then the next tick tries again. */
const BUSY_TIMEOUT_MS = 1000;

export interface LiveTelemetryOptions {
  controlLocation: ControlLocation;
  telemetry: TelemetryLocation;
  quota: AdmissionQuota;
  /**
   * Called as written rows' holds end: their spend is committed to the control store, which the
   * store's caches would otherwise learn only from the next turn of the event loop.
   */
  settled: () => void;
  log: FastifyBaseLogger;
  flushMs: number;
}

/**
 * A deletion's rows and search terms, how long it held the writing thread (ms), and whether more
 * is left to delete before the horizon it was given (rows, or terms of rows deleted).
 */
export interface Expired {
  rows: number;
  terms: number;
  /** Fine rollup cells deleted (`thin`). */
  cells: number;
  ms: number;
  more: boolean;
}

interface Expiry {
  step: ExpiryStep;
  orgId: string;
  before: number;
  limit: number;
  /** The rows step's result, when this is the terms step after it. */
  rowsDone?: Expired;
  resolve: (done: Expired) => void;
  reject: (error: Error) => void;
}

/**
 * The gateways' request rows, written in small batches (group commit) through the import
 * pipeline, so that rows, rollups, search terms and each key's spend are written as for any
 * import, by a thread of their own (telemetry-thread.ts, started with the first row). A row's
 * cost stays held against its key's credit until its batch has settled. A request id already
 * stored or waiting (a batch a gateway sent again after a lost answer) is skipped, never
 * stored twice.
 */
export class LiveTelemetry {
  private waiting: RequestRecord[] = [];
  private readonly waitingIds = new Set<string>();
  /** The batch the thread is writing, if any: one at a time, in order. */
  private writing: { id: number; rows: RequestRecord[] } | null = null;
  private batches = 0;
  /** Callers of `written()`, each with the rows queued when it asked; resolved once those commit. */
  private waiters: { ahead: number; resolve: () => void }[] = [];
  private thread: Worker | null = null;
  private closed: (() => void) | null = null;
  private readonly timer: NodeJS.Timeout;
  private readonly keeper: NodeJS.Timeout;
  private failing = false;
  /** The batch under way was committed but its spend left in the outbox (the control store busy). */
  private writingUnsettled = false;
  /** Requests whose rows are written and whose spend waits in the outbox: still held against their keys. */
  private owed: string[] = [];
  /** Retention's deletions waiting for the thread, and the one it is doing: one thing at a time, rows first. */
  private expiries: Expiry[] = [];
  private expiring: (Expiry & { id: number }) | null = null;
  /** Set by `close`: a deletion under way then ends with its rows step. */
  private closing = false;
  private lastSent: 'rows' | 'expiry' = 'rows';

  constructor(private readonly options: LiveTelemetryOptions) {
    this.timer = setInterval(() => this.flush(), options.flushMs).unref();
    // A store slow to take rows (an import holding it) must not let their holds lapse meanwhile.
    this.keeper = setInterval(() => {
      const unwritten = [...this.waitingIds, ...this.owed];
      if (unwritten.length > 0) this.options.quota.keep(unwritten);
    }, KEEP_MS).unref();
  }

  /** Queues a row; its actual cost replaces what its request held, until written. */
  add(row: RequestRecord): void {
    if (this.waitingIds.has(row.req_id)) return;
    this.options.quota.settle(row.req_id, row.cost_micro);
    this.waiting.push(row);
    this.waitingIds.add(row.req_id);
    if (this.waiting.length > MAX_WAITING) {
      const dropped = this.waiting.splice(0, this.waiting.length - MAX_WAITING);
      this.forget(dropped);
      this.options.log.error(
        { dropped: dropped.length },
        'gateway telemetry: rows dropped, the store has not accepted writes',
      );
    }
  }

  /** Resolves once every row queued so far is committed (or dropped past the limit). */
  written(): Promise<void> {
    const ahead = (this.writing?.rows.length ?? 0) + this.waiting.length;
    if (ahead === 0) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ ahead, resolve }));
  }

  /**
   * Deletes at most `limit` of the organisation's rows older than `before` on the writing thread,
   * then a stretch of their search terms, each between batches of rows, so that neither waits for
   * the other's lock; resolves with how many of each went.
   */
  expire(orgId: string, before: number, limit: number): Promise<Expired> {
    return new Promise((resolve, reject) => {
      this.expiries.push({ step: 'rows', orgId, before, limit, resolve, reject });
      this.flush();
    });
  }

  /**
   * Deletes the oldest hour of fine rollup cells before `since` (fine-cells.ts) on the writing
   * thread, between batches of rows as a deletion of rows is.
   */
  thin(since: number): Promise<Expired> {
    return new Promise((resolve, reject) => {
      this.expiries.push({ step: 'cells', orgId: '', before: since, limit: 0, resolve, reject });
      this.flush();
    });
  }

  /**
   * Hands what waits to the writing thread, unless it is busy: rows, or a deletion when no rows
   * wait or the last thing sent was rows (so that neither starves the other).
   */
  flush(): void {
    if (this.writing || this.expiring) return;
    const rowsWait = this.waiting.length > 0;
    const expiry = this.expiries[0];
    if (expiry && (!rowsWait || this.lastSent === 'rows')) {
      this.expiries.shift();
      this.expiring = { ...expiry, id: ++this.batches };
      this.lastSent = 'expiry';
      const { step, orgId, before, limit } = expiry;
      this.send({ kind: 'expire', id: this.expiring.id, step, orgId, before, limit });
      return;
    }
    if (!rowsWait) return;
    this.writing = { id: ++this.batches, rows: this.waiting };
    this.waiting = [];
    this.lastSent = 'rows';
    this.send({ kind: 'rows', id: this.writing.id, rows: this.writing.rows });
  }

  /** Writes what is left (for up to `graceMs`), then stops the thread. */
  async close(graceMs = 10_000): Promise<void> {
    clearInterval(this.timer);
    clearInterval(this.keeper);
    this.closing = true;
    for (const expiry of this.expiries.splice(0)) expiry.reject(new Error('the request log is closing'));
    if (!this.thread && this.waiting.length === 0) return;
    const deadline = Date.now() + graceMs;
    while ((this.writing || this.waiting.length > 0) && Date.now() < deadline) {
      this.flush();
      await Promise.race([this.written(), new Promise((resolve) => setTimeout(resolve, 100))]);
    }
    const left = this.waiting.length + (this.writing?.rows.length ?? 0);
    if (left > 0) this.options.log.error({ rows: left }, 'gateway telemetry: rows not written before stopping');
    const thread = this.thread;
    if (!thread) return;
    await new Promise<void>((resolve) => {
      this.closed = resolve;
      thread.postMessage({ kind: 'close' } satisfies ToTelemetryThread);
    });
    this.thread = null;
  }

  private send(message: ToTelemetryThread): void {
    this.thread ??= this.start();
    this.thread.postMessage(message);
  }

  private start(): Worker {
    const workerData: TelemetryThreadData = {
      controlLocation: this.options.controlLocation,
      telemetry: this.options.telemetry,
      busyTimeoutMs: BUSY_TIMEOUT_MS,
    };
    const thread = startWorker(workerUrl('telemetry-thread', import.meta.url), { workerData });
    thread.on('message', (message: FromTelemetryThread) => this.heard(message));
    thread.on('error', (error) => {
      this.options.log.error({ err: error }, 'gateway telemetry: the writing thread failed; starting another');
      this.retry();
    });
    thread.on('exit', () => {
      if (this.thread === thread) this.thread = null;
      this.closed?.();
    });
    return thread;
  }

  /**
   * A deletion's rows step is followed by its terms step, first in line after it but behind a
   * batch of rows that waits (`flush`): neither holds the rows for both. The caller hears of both
   * at once, with the longer of their transactions.
   */
  private stepDone(expiry: Expiry, done: Extract<FromTelemetryThread, { kind: 'expired' }>): void {
    const { rows, terms, cells, ms, more } = done;
    const first = expiry.rowsDone;
    if (first) {
      expiry.resolve({ rows: first.rows, terms, cells, ms: Math.max(first.ms, ms), more: first.more || more });
    } else if (this.closing || expiry.step === 'cells') expiry.resolve({ rows, terms, cells, ms, more });
    else this.expiries.unshift({ ...expiry, step: 'terms', rowsDone: { rows, terms, cells, ms, more } });
  }

  private heard(message: FromTelemetryThread): void {
    if (message.kind === 'upgrading') {
      const { telemetry } = this.options;
      if ('path' in telemetry) logUpgrading(this.options.log, telemetry.path, message.migration);
      return;
    }
    if (this.expiring && 'id' in message && message.id === this.expiring.id) {
      const expiring = this.expiring;
      this.expiring = null;
      if (message.kind === 'expired') this.stepDone(expiring, message);
      else if (message.kind === 'failed') expiring.reject(new Error(message.message));
      this.flush();
      return;
    }
    if (message.kind === 'unsettled') {
      this.options.log.warn({ reason: message.message }, 'gateway telemetry: spend waits');
      this.writingUnsettled = true;
      return;
    }
    if (message.kind === 'expired' || message.id !== this.writing?.id) return;
    if (message.kind === 'failed') {
      if (!this.failing) {
        this.options.log.warn(
          { reason: message.message, rows: this.writing.rows.length },
          'gateway telemetry: write failed, retrying',
        );
      }
      this.failing = true;
      this.retry();
      return;
    }
    if (this.failing) this.options.log.info('gateway telemetry: writing again');
    this.failing = false;
    const rows = this.writing.rows;
    this.writing = null;
    if (this.writingUnsettled) {
      // Their spend is owed, not yet in the keys: held until a commit settles the outbox.
      this.writingUnsettled = false;
      for (const row of rows) this.owed.push(row.req_id);
      this.forget(rows, { keepHolds: true });
      return;
    }
    // Each commit settles whatever the outbox still holds: what was owed is in the keys now.
    const owed = this.owed;
    this.owed = [];
    this.forget(rows);
    for (const reqId of owed) this.options.quota.release(reqId);
    // A deletion waiting for this batch goes now, not at the next tick.
    if (this.expiries.length > 0) this.flush();
  }

  /** The batch under way goes back to the front of the queue, for the next tick. */
  private retry(): void {
    this.writingUnsettled = false;
    // A deletion the thread did not answer is asked again by the next sweep: nothing depends on it.
    this.expiring?.reject(new Error('the writing thread failed'));
    this.expiring = null;
    if (!this.writing) return;
    this.waiting = this.writing.rows.concat(this.waiting);
    this.writing = null;
    // Waiters counted these rows already; nothing is forgotten, so they keep waiting.
  }

  /**
   * Rows written (or dropped) leave the queue's books: their holds end (unless their spend is
   * still owed), and those waiting on them hear.
   */
  private forget(rows: readonly RequestRecord[], options: { keepHolds?: boolean } = {}): void {
    this.options.settled();
    for (const row of rows) {
      this.waitingIds.delete(row.req_id);
      if (!options.keepHolds) this.options.quota.release(row.req_id);
    }
    const waiters = this.waiters;
    this.waiters = [];
    for (const waiter of waiters) {
      waiter.ahead -= rows.length;
      if (waiter.ahead <= 0) waiter.resolve();
      else this.waiters.push(waiter);
    }
  }
}
