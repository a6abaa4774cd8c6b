import type pg from 'pg';
import type { AdmissionQuota, QuotaAsk, QuotaVerdict } from '../admission-quota.js';

/**
 * How long an answered request's hold lasts unless kept (`keep`): a replica that died with rows
 * unwritten would otherwise hold its keys' credit forever. Kept every few minutes while it waits.
 */
const ANSWERED_HOLD_MS = 10 * 60_000;
/** After a failed write of settles and releases, the next try. */
const RETRY_MS = 1_000;

interface Row {
  verdict: 'rate' | 'credit' | 'held';
  remaining: number | null;
  reset_ms: number | null;
}

export interface PgQuotaOptions {
  /** Tests only: time is this clock's, not the database's. */
  clock?: () => number;
}

/**
 * The quota in the database, shared by every replica on it (migration 003): each admission is one
 * statement (`admit_request`) under a lock on its key, on the database's clock, reading the key's
 * spend as committed. Settles and releases take the same lock. A row's spend is committed to the
 * key before its hold is released (live-telemetry.ts), so between the two the cost counts twice,
 * never not at all: the credit is overshot by one request's cost at most, however many replicas
 * admit at once.
 *
 * It has a pool of its own: admissions of a busy key wait for its lock holding a connection, and
 * the store's own reads and writes are not to wait behind them. Settles, keeps and releases are
 * written after the fact, several to a statement and in the order they came; until they are, a
 * hold stays at the request's largest cost, which errs on the safe side.
 */
export class PgAdmissionQuota implements AdmissionQuota {
  /** The spend is read under the key's lock: nothing to read again. */
  readonly releases = 0;
  private settles = new Map<string, number>();
  private keeping = new Set<string>();
  private releasing = new Set<string>();
  /** The writes of settles, keeps and releases, one after another. */
  private writes: Promise<void> = Promise.resolve();
  private scheduled = false;
  private closed = false;
  private report: (error: unknown) => void = () => undefined;
  private failing = false;

  /** Takes `pool` as its own: `close` ends it. */
  constructor(
    private readonly pool: pg.Pool,
    private readonly options: PgQuotaOptions = {},
  ) {}

  releasedSince(): boolean {
    return false;
  }

  reportFailures(report: (error: unknown) => void): void {
    this.report = report;
  }

  async take(ask: QuotaAsk): Promise<QuotaVerdict> {
    const { rows } = await this.pool.query<Row>({
      // Prepared once a connection: parsing it again would cost the database a third of the call.
      name: 'admit_request',
      text: 'SELECT * FROM admit_request($1, $2, $3, $4, $5, $6, $7)',
      values: [
        ask.keyId,
        ask.reqId,
        ask.rateLimitRpm,
        ask.creditLimitMicro,
        ask.heldMicro,
        this.now(),
        ask.lapsesAt - ask.now,
      ],
    });
    const row = rows[0]!;
    const resetMs = row.reset_ms!;
    if (row.verdict === 'rate') return { kind: 'rate', resetMs };
    return { kind: row.verdict, remaining: row.remaining!, resetMs };
  }

  settle(reqId: string, micro: number): void {
    this.settles.set(reqId, micro);
    this.schedule();
  }

  keep(reqIds: readonly string[]): void {
    for (const reqId of reqIds) this.keeping.add(reqId);
    this.schedule();
  }

  release(reqId: string): void {
    this.settles.delete(reqId);
    this.keeping.delete(reqId);
    this.releasing.add(reqId);
    this.schedule();
  }

  /** Writes what is asked so far, now; resolves once written, or once failed (and told). */
  drain(): Promise<void> {
    this.writes = this.writes.then(() => this.write()).catch((error: unknown) => this.failed(error));
    return this.writes;
  }

  /** Writes what is asked so far (a failed write is tried once more), then ends the pool. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (let tries = 0; tries < 2 && this.pending(); tries++) await this.drain();
    await this.pool.end();
  }

  /** Null: the database's clock. */
  private now(): number | null {
    return this.options.clock?.() ?? null;
  }

  private pending(): boolean {
    return this.settles.size > 0 || this.keeping.size > 0 || this.releasing.size > 0;
  }

  private schedule(): void {
    if (this.scheduled || this.closed) return;
    this.scheduled = true;
    // After this turn of the event loop: a batch of rows written is one statement, not one each.
    setImmediate(() => {
      this.scheduled = false;
      if (this.closed) return;
      this.writes = this.writes
        .then(() => this.write())
        .catch((error: unknown) => {
          this.failed(error);
          setTimeout(() => this.schedule(), RETRY_MS).unref();
        });
    });
  }

  private failed(error: unknown): void {
    // Told once until a write succeeds again: a database that is down fails every second.
    if (!this.failing) this.report(error);
    this.failing = true;
  }

  private async write(): Promise<void> {
    if (!this.pending()) return;
    const { settles, keeping, releasing } = this;
    this.settles = new Map();
    this.keeping = new Set();
    this.releasing = new Set();
    try {
      if (settles.size > 0) {
        await this.pool.query('SELECT settle_holds($1::text[], $2::bigint[], $3, $4)', [
          [...settles.keys()],
          [...settles.values()],
          ANSWERED_HOLD_MS,
          this.now(),
        ]);
        settles.clear();
      }
      if (keeping.size > 0) {
        await this.pool.query('SELECT keep_holds($1::text[], $2, $3)', [[...keeping], ANSWERED_HOLD_MS, this.now()]);
        keeping.clear();
      }
      if (releasing.size > 0) await this.pool.query('SELECT release_holds($1::text[])', [[...releasing]]);
      this.failing = false;
    } catch (error) {
      // Tried again with what came meanwhile; a release asked since overrides a settle or keep of the same request.
      for (const [reqId, micro] of settles) {
        if (!this.releasing.has(reqId) && !this.settles.has(reqId)) this.settles.set(reqId, micro);
      }
      for (const reqId of keeping) if (!this.releasing.has(reqId)) this.keeping.add(reqId);
      for (const reqId of releasing) this.releasing.add(reqId);
      throw error;
    }
  }
}
