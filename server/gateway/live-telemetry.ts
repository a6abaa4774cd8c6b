import type { FastifyBaseLogger } from 'fastify';
import { recordRequests } from '../ingest/record-requests.js';
import type { ControlStore } from '../stores/control/store.js';
import type { RequestRecord } from '../stores/telemetry/request-record.js';
import type { CreditHolds } from './credit-holds.js';

/** Rows kept while the telemetry store cannot be written; past this the oldest are dropped (and said so). */
const MAX_WAITING = 200_000;

/**
 * The gateway's request rows, written in small batches (group commit) through the import
 * pipeline, so that rows, rollups, search terms and each key's spend are written as for any
 * import. A row's cost stays held against its key's credit until its batch has settled.
 */
export class LiveTelemetry {
  private waiting: RequestRecord[] = [];
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

  /** Queues a row; its cost is held against its key until written. */
  add(row: RequestRecord): void {
    if (row.key_id !== null && row.cost_micro > 0) this.holds.hold(row.key_id, row.cost_micro);
    this.waiting.push(row);
    if (this.waiting.length > MAX_WAITING) {
      const dropped = this.waiting.splice(0, this.waiting.length - MAX_WAITING);
      for (const old of dropped) if (old.key_id !== null) this.holds.release(old.key_id, old.cost_micro);
      this.log.error({ dropped: dropped.length }, 'gateway telemetry: rows dropped, the store has not accepted writes');
    }
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
    for (const row of rows)
      if (row.key_id !== null && row.cost_micro > 0) this.holds.release(row.key_id, row.cost_micro);
  }

  close(): void {
    clearInterval(this.timer);
    this.flush();
  }
}
