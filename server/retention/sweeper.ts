import type { FastifyBaseLogger } from 'fastify';
import { effectiveRetentionDays, retentionHorizon } from '../domain/retention.js';
import { fineCellsSince } from '../stores/telemetry/rollup-grains.js';

/** How often the request log is swept: a horizon moves by the hour, so a few minutes late is nothing. */
export const SWEEP_INTERVAL_MS = 10 * 60_000;
/**
 * Rows deleted per transaction: about 12 ms of the writing thread on a quiet machine (500 took 30,
 * 68 at most). Under a closed loop the thread, below the event loop, waits for a core, and a
 * commit that checkpoints the WAL takes longer: measured 137 ms at most (100 rows: 105, and the
 * day took twice as long).
 */
export const SWEEP_BATCH_ROWS = 200;
/** The pause between two deletions: readers and the gateways' rows go first. */
const SWEEP_PAUSE_MS = 10;

export interface RetentionSweeperOptions {
  /** The platform's `--retention-days`; null keeps every row unless an organisation says less. */
  platformDays: number | null;
  /** The organisations with a retention of their own. */
  retentions(): Promise<{ orgId: string; days: number }[]>;
  /** Every organisation: a platform retention applies to all of them. */
  organizations(): Promise<string[]>;
  /**
   * Deletes at most `limit` of the organisation's rows older than `before`, and some of the search
   * terms of rows deleted: how many of each went, how long it held the writer (ms), and whether
   * more is left.
   */
  expire(
    orgId: string,
    before: number,
    limit: number,
  ): Promise<{ rows: number; terms: number; ms: number; more: boolean }>;
  /**
   * Drops whole the stored days whose rows are all past their organisation's horizon (given for
   * every organisation with one), before any row is deleted one by one, and finishes the drops
   * stopped half-way: PostgreSQL's day tables.
   */
  dropDays?(horizons: ReadonlyMap<string, number>): Promise<{ days: number; rows: number }>;
  /**
   * Deletes an hour of fine rollup cells before `since` (SQLite's fine-cells.ts): how many went,
   * how long it held the writer, and whether more may be left. Not given: every cell is kept.
   */
  thin?(since: number): Promise<{ cells: number; ms: number; more: boolean }>;
  now(): number;
  log: FastifyBaseLogger;
  intervalMs?: number;
  batchRows?: number;
  pauseMs?: number;
}

interface Swept {
  rows: number;
  terms: number;
  batches: number;
  ms: number;
  longestBatchMs: number;
}

/**
 * Deletes request-log rows past each organisation's retention horizon (domain/retention.ts), and
 * the fine rollup cells past theirs (rollup-grains.ts, FINE_CELL_DAYS), in the background, in small
 * transactions on the thread that writes the gateways' rows. One sweep at a time; a sweep that
 * fails is tried again at the next.
 */
export class RetentionSweeper {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private closed = false;
  private again = false;

  constructor(private readonly options: RetentionSweeperOptions) {}

  /** Sweeps now, then every interval. */
  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.sweep(), this.options.intervalMs ?? SWEEP_INTERVAL_MS).unref();
    void this.sweep();
  }

  /**
   * One sweep of every organisation with a retention; never throws. Asked during a sweep (a
   * retention just shortened), another follows it, with the retentions as they are then.
   */
  sweep(): Promise<void> {
    if (this.running) {
      this.again = true;
      return this.running;
    }
    this.running = (async () => {
      do {
        this.again = false;
        await this.sweepAll();
      } while (this.again && !this.closed);
    })().finally(() => (this.running = null));
    return this.running;
  }

  /** Stops sweeping, after the deletion under way. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running;
  }

  private async sweepAll(): Promise<void> {
    await this.sweepRows();
    if (this.options.thin && !this.closed) await this.thinCells(this.options.thin);
  }

  /** The fine cells before their start deleted an hour at a time; never throws. */
  private async thinCells(thin: NonNullable<RetentionSweeperOptions['thin']>): Promise<void> {
    const since = fineCellsSince(this.options.now());
    const started = performance.now();
    const thinned = { cells: 0, batches: 0, longestBatchMs: 0 };
    try {
      for (;;) {
        const { cells, ms, more } = await thin(since);
        thinned.cells += cells;
        thinned.batches += 1;
        thinned.longestBatchMs = Math.max(thinned.longestBatchMs, Math.round(ms));
        if (!more || this.closed) break;
        await new Promise((resolve) => setTimeout(resolve, this.options.pauseMs ?? SWEEP_PAUSE_MS));
      }
    } catch (error) {
      this.options.log.warn(
        { err: error },
        'could not delete old minute and five-minute cells; trying again at the next sweep',
      );
    }
    if (thinned.cells > 0) {
      this.options.log.info(
        { before: new Date(since).toISOString(), ...thinned, ms: Math.round(performance.now() - started) },
        'old minute and five-minute cells deleted',
      );
    }
  }

  private async sweepRows(): Promise<void> {
    const { options } = this;
    const failed = (error: unknown, orgId?: string) =>
      options.log.warn(
        { err: error, ...(orgId === undefined ? {} : { orgId }) },
        'retention: could not delete old request rows; trying again at the next sweep',
      );
    let own: Map<string, number>;
    let orgIds: string[];
    try {
      own = new Map((await options.retentions()).map((r) => [r.orgId, r.days]));
      orgIds = options.platformDays === null ? [...own.keys()] : await options.organizations();
    } catch (error) {
      failed(error);
      return;
    }
    const horizons = new Map<string, number>();
    for (const orgId of orgIds) {
      const days = effectiveRetentionDays(options.platformDays, own.get(orgId) ?? null);
      const horizon = retentionHorizon(days, options.now());
      if (horizon !== null) horizons.set(orgId, horizon);
    }
    // Without horizons too: a drop stopped half-way is finished.
    if (options.dropDays && !this.closed) {
      try {
        const dropped = await options.dropDays(horizons);
        if (dropped.days > 0) options.log.info(dropped, 'retention: whole days of old request rows dropped');
      } catch (error) {
        // The rows are deleted one by one below instead.
        failed(error);
      }
    }
    for (const [orgId, horizon] of horizons) {
      if (this.closed) return;
      // One organisation's failure leaves the others' deletions to go on.
      try {
        const swept = await this.sweepOrganisation(orgId, horizon);
        if (swept.rows > 0 || swept.terms > 0) {
          options.log.info(
            { orgId, before: new Date(horizon).toISOString(), ...swept },
            'retention: old request rows deleted',
          );
        }
      } catch (error) {
        failed(error, orgId);
      }
    }
  }

  /** The organisation's rows before `horizon` deleted, and what it took: the longest batch is the longest a write waited for one. */
  private async sweepOrganisation(orgId: string, horizon: number): Promise<Swept> {
    const batch = this.options.batchRows ?? SWEEP_BATCH_ROWS;
    const started = performance.now();
    const swept: Swept = { rows: 0, terms: 0, batches: 0, ms: 0, longestBatchMs: 0 };
    for (;;) {
      const { rows, terms, ms, more } = await this.options.expire(orgId, horizon, batch);
      swept.rows += rows;
      swept.terms += terms;
      swept.batches += 1;
      swept.longestBatchMs = Math.max(swept.longestBatchMs, Math.round(ms));
      if (!more || this.closed) break;
      await new Promise((resolve) => setTimeout(resolve, this.options.pauseMs ?? SWEEP_PAUSE_MS));
    }
    swept.ms = Math.round(performance.now() - started);
    return swept;
  }
}
