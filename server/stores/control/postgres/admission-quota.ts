import type pg from 'pg';
import type { AdmissionQuota, QuotaAsk, QuotaVerdict } from '../admission-quota.js';

/**
 * How long an answered request's hold lasts unless kept (`keep`): a replica that died with rows
 * unwritten would otherwise hold its keys' credit forever. Kept every few minutes while it waits.
 */
const ANSWERED_HOLD_MS = 10 * 60_000;
/** After a failed write of settles and releases, the next try. */
const RETRY_MS = 1_000;
/**
 * How long a settle waits before it is written: most requests' rows are written and their holds
 * released sooner (the gateway writes rows every 200 ms), and a release makes their settle moot.
 * Measured with settles written at once: a settle statement for every seven requests, holding
 * their keys' locks for a millisecond each time, was the quota's second cost after the admission.
 */
const SETTLE_AFTER_MS = 500;

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
  /** Settles younger than SETTLE_AFTER_MS, and between one and two times that: `age` moves them on. */
  private young = new Map<string, number>();
  private older = new Map<string, number>();
  private ager: NodeJS.Timeout | null = null;
  private keeping = new Set<string>();
  private releasing = new Set<string>();
  /** The writes of settles, keeps and releases, one after another. */
  private writes: Promise<void> = Promise.resolve();
  private scheduled = false;
  /** Set while a failed write waits to be tried again: nothing is written before. */
  private retry: NodeJS.Timeout | null = null;
  private closed = false;
  /** By key, the last admission asked: a key's admissions go one at a time from this process. */
  private readonly turns = new Map<string, Promise<unknown>>();
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

  /**
   * A key's admissions queue here before they take a connection: only one of them waits for the
   * key's lock in the database, and a busy key never holds up the pool for the others.
   */
  take(ask: QuotaAsk): Promise<QuotaVerdict> {
    const before = this.turns.get(ask.keyId);
    const run = () => this.admit(ask);
    const result = before ? before.then(run, run) : run();
    const turn = result.catch(() => undefined);
    this.turns.set(ask.keyId, turn);
    void turn.then(() => {
      if (this.turns.get(ask.keyId) === turn) this.turns.delete(ask.keyId);
    });
    return result;
  }

  private async admit(ask: QuotaAsk): Promise<QuotaVerdict> {
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

  /** Each idle key in a statement of its own: one lock at a time, never thousands in one transaction. */
  async purge(): Promise<number> {
    const { rows } = await this.pool.query<{ key_id: string }>(
      `SELECT key_id FROM admission_keys
       WHERE oldest_second < floor(COALESCE($1, admission_clock()) / 1000.0) - 60
         AND next_lapse <= COALESCE($1, admission_clock())`,
      [this.now()],
    );
    let purged = 0;
    for (const { key_id } of rows) {
      const done = await this.pool.query<{ idle: boolean }>('SELECT purge_admission_key($1, $2) AS idle', [
        key_id,
        this.now(),
      ]);
      if (done.rows[0]!.idle) purged++;
    }
    return purged;
  }

  settle(reqId: string, micro: number): void {
    this.young.set(reqId, micro);
    this.ager ??= setTimeout(() => this.age(), SETTLE_AFTER_MS).unref();
  }

  /** The older settles are due; the young become older. */
  private age(): void {
    this.ager = null;
    for (const [reqId, micro] of this.older) this.settles.set(reqId, micro);
    this.older = this.young;
    this.young = new Map();
    if (this.older.size > 0) this.ager = setTimeout(() => this.age(), SETTLE_AFTER_MS).unref();
    if (this.settles.size > 0) this.schedule();
  }

  keep(reqIds: readonly string[]): void {
    for (const reqId of reqIds) this.keeping.add(reqId);
    this.schedule();
  }

  release(reqId: string): void {
    this.young.delete(reqId);
    this.older.delete(reqId);
    this.settles.delete(reqId);
    this.keeping.delete(reqId);
    this.releasing.add(reqId);
    this.schedule();
  }

  /** Writes what is asked so far, now, settles too; resolves once written, or once failed (and told). */
  drain(): Promise<void> {
    for (const settles of [this.older, this.young]) {
      for (const [reqId, micro] of settles) this.settles.set(reqId, micro);
      settles.clear();
    }
    this.writes = this.writes.then(() => this.write()).catch((error: unknown) => this.failed(error));
    return this.writes;
  }

  /** Writes what is asked so far (a failed write is tried once more), then ends the pool. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.retry) clearTimeout(this.retry);
    this.retry = null;
    if (this.ager) clearTimeout(this.ager);
    this.ager = null;
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
    if (this.scheduled || this.retry || this.closed) return;
    this.scheduled = true;
    // After this turn of the event loop: a batch of rows written is one statement, not one each.
    setImmediate(() => {
      this.scheduled = false;
      if (this.closed) return;
      this.writes = this.writes
        .then(() => this.write())
        .catch((error: unknown) => {
          this.failed(error);
          this.retry = setTimeout(() => {
            this.retry = null;
            this.schedule();
          }, RETRY_MS).unref();
        });
    });
  }

  private failed(error: unknown): void {
    // Told once until a write succeeds again: a database that is down fails every second.
    if (!this.failing) this.report(error);
    this.failing = true;
  }

  /**
   * Each kind in a statement of its own, each tried whatever became of the others: a settle that
   * keeps failing does not keep the releases from being written. What failed is asked again.
   */
  private async write(): Promise<void> {
    if (!this.pending()) return;
    const { settles, keeping, releasing } = this;
    this.settles = new Map();
    this.keeping = new Set();
    this.releasing = new Set();
    const errors: unknown[] = [];
    const attempt = async (work: () => Promise<unknown>, again: () => void) => {
      try {
        await work();
      } catch (error) {
        errors.push(error);
        again();
      }
    };
    await attempt(
      () =>
        settles.size === 0
          ? Promise.resolve()
          : this.pool.query('SELECT settle_holds($1::text[], $2::bigint[], $3, $4)', [
              [...settles.keys()],
              [...settles.values()],
              ANSWERED_HOLD_MS,
              this.now(),
            ]),
      // A release asked since overrides a settle or keep of the same request.
      () => {
        for (const [reqId, micro] of settles) {
          if (!this.releasing.has(reqId) && !this.settles.has(reqId)) this.settles.set(reqId, micro);
        }
      },
    );
    await attempt(
      () =>
        keeping.size === 0
          ? Promise.resolve()
          : this.pool.query('SELECT keep_holds($1::text[], $2, $3)', [[...keeping], ANSWERED_HOLD_MS, this.now()]),
      () => {
        for (const reqId of keeping) if (!this.releasing.has(reqId)) this.keeping.add(reqId);
      },
    );
    await attempt(
      () =>
        releasing.size === 0
          ? Promise.resolve()
          : this.pool.query('SELECT release_holds($1::text[])', [[...releasing]]),
      () => {
        for (const reqId of releasing) this.releasing.add(reqId);
      },
    );
    if (errors.length > 0) throw errors[0];
    this.failing = false;
  }
}
