import type { FastifyBaseLogger } from 'fastify';
import { recordRequests } from '../ingest/record-requests.js';
import type { ControlStore } from '../stores/control/store.js';
import type { RequestRecord } from '../stores/telemetry/request-record.js';
import type { CreditHolds } from './credit-holds.js';

/** Rows kept while the telemetry store cannot be written; past this the oldest are dropped (and said so). */
const MAX_WAITING = 200_000;

/**
 * The gateways' request rows, written in small batches (group commit) through the import
 * pipeline, so that rows, rollups, search terms and each key's spend are written as for any
 * import. A row's cost stays held against its key's credit until its batch has settled. A
 * request id already stored or waiting (a batch a gateway sent again after a lost answer) is
 * skipped, never stored twice.
 */
export class LiveTelemetry {
  private waiting: RequestRecord[] = [];
  private readonly waitingIds = new Set<string>();
  /** Callers of `written()`, each with the rows queued when it asked; resolved once those commit. */
  private waiters: { ahead: number; resolve: () => void }[] = [];
  private readonly timer: NodeJS.Timeout;
  private failing = false;

  constructor(
    private readonly control: ControlStore,
    private readonly telemetryPath: string,
    private readonly holds: CreditHolds,
    private readonly log: FastifyBaseLogger,
    flushMs: number,
  ) {
    this.timer = setInterval(() => this.flush(), flushMs).unref();
  }

  /** Queues a row; its actual cost replaces what its request held, until written. */
  add(row: RequestRecord): void {
    if (this.waitingIds.has(row.req_id)) return;
    this.holds.settle(row.req_id, row.cost_micro);
    this.waiting.push(row);
    this.waitingIds.add(row.req_id);
    if (this.waiting.length > MAX_WAITING) {
      const dropped = this.waiting.splice(0, this.waiting.length - MAX_WAITING);
      this.forget(dropped);
      this.log.error({ dropped: dropped.length }, 'gateway telemetry: rows dropped, the store has not accepted writes');
    }
  }

  /** Resolves once every row queued so far is committed (or dropped past the limit). */
  written(): Promise<void> {
    if (this.waiting.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ ahead: this.waiting.length, resolve }));
  }

  /** Writes what waits, in one transaction; on failure keeps it for the next tick. */
  flush(): void {
    if (this.waiting.length === 0) return;
    const rows = this.waiting;
    this.waiting = [];
    try {
      // Without waiting for a lock an import holds (minutes): the next tick tries again. Spend
      // that cannot be settled now waits in the outbox, so the rows are never written twice.
      recordRequests(this.control, this.telemetryPath, rows, {
        busyTimeoutMs: 0,
        skipStored: true,
        report: (event) => {
          if (event.kind === 'unsettled') this.log.warn({ reason: event.message }, 'gateway telemetry: spend waits');
        },
      });
    } catch (error) {
      this.waiting = rows.concat(this.waiting);
      if (!this.failing) this.log.warn({ err: error, rows: rows.length }, 'gateway telemetry: write failed, retrying');
      this.failing = true;
      return;
    }
    if (this.failing) this.log.info('gateway telemetry: writing again');
    this.failing = false;
    this.forget(rows);
  }

  close(): void {
    clearInterval(this.timer);
    this.flush();
  }

  /** Rows written (or dropped) leave the queue's books: their holds end, and those waiting on them hear. */
  private forget(rows: readonly RequestRecord[]): void {
    for (const row of rows) {
      this.waitingIds.delete(row.req_id);
      this.holds.release(row.req_id);
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
