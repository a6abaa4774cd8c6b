import type pg from 'pg';
import type { AdmissionQuota, QuotaAsk, QuotaVerdict } from '../admission-quota.js';

/**
 * How much longer an answered request's hold lasts (it lapses anyway, unlike in one process's
 * memory): a replica that died with rows unwritten would otherwise hold its keys' credit forever.
 */
const ANSWERED_HOLD_MS = 10 * 60_000;
/** After a failed write of settles and releases, the next try. */
const RETRY_MS = 1_000;

interface Row {
  verdict: 'rate' | 'credit' | 'held';
  remaining: number | null;
  reset_ms: number | null;
}

/**
 * The quota in the database, shared by every replica on it (migration 003): each admission is one
 * statement (`admit_request`) under a lock on its key, reading the key's spend as committed.
 * A row's spend is committed to the key before its hold is released here (live-telemetry.ts), so
 * between the two the cost counts twice, never not at all: the credit is never overshot by more
 * than one request's cost, however many replicas admit at once.
 *
 * Settles and releases are written after the fact, several to a statement and in the order they
 * came; until they are, a hold stays at the request's largest cost, which errs on the safe side.
 */
export class PgAdmissionQuota implements AdmissionQuota {
  /** The spend is read under the key's lock: nothing to read again. */
  readonly releases = 0;
  private settles = new Map<string, number>();
  private releasing = new Set<string>();
  /** The writes of settles and releases, one after another. */
  private writes: Promise<void> = Promise.resolve();
  private scheduled = false;

  constructor(private readonly pool: pg.Pool) {}

  releasedSince(): boolean {
    return false;
  }

  async take(ask: QuotaAsk): Promise<QuotaVerdict> {
    const { rows } = await this.pool.query<Row>('SELECT * FROM admit_request($1, $2, $3, $4, $5, $6, $7)', [
      ask.keyId,
      ask.reqId,
      ask.rateLimitRpm,
      ask.creditLimitMicro,
      ask.heldMicro,
      ask.now,
      ask.lapsesAt,
    ]);
    const row = rows[0]!;
    const resetMs = row.reset_ms!;
    if (row.verdict === 'rate') return { kind: 'rate', resetMs };
    return { kind: row.verdict, remaining: row.remaining!, resetMs };
  }

  settle(reqId: string, micro: number): void {
    this.settles.set(reqId, micro);
    this.schedule();
  }

  release(reqId: string): void {
    this.settles.delete(reqId);
    this.releasing.add(reqId);
    this.schedule();
  }

  /** Writes the settles and releases asked for so far; resolves once written, or failed. */
  drain(): Promise<void> {
    this.writes = this.writes.then(() => this.write()).catch(() => undefined);
    return this.writes;
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    // After this turn of the event loop: a batch of rows written is one statement, not one each.
    setImmediate(() => {
      this.scheduled = false;
      this.writes = this.writes
        .then(() => this.write())
        .catch(() => void setTimeout(() => this.schedule(), RETRY_MS).unref());
    });
  }

  private async write(): Promise<void> {
    const settles = this.settles;
    const releasing = this.releasing;
    this.settles = new Map();
    this.releasing = new Set();
    if (settles.size === 0 && releasing.size === 0) return;
    try {
      if (settles.size > 0) {
        await this.pool.query(
          `UPDATE credit_holds h SET micro = v.micro, lapses_at = h.lapses_at + $3
           FROM unnest($1::text[], $2::bigint[]) AS v (req_id, micro) WHERE h.req_id = v.req_id`,
          [[...settles.keys()], [...settles.values()], ANSWERED_HOLD_MS],
        );
        settles.clear();
      }
      if (releasing.size > 0)
        await this.pool.query('DELETE FROM credit_holds WHERE req_id = ANY($1::text[])', [[...releasing]]);
    } catch (error) {
      // Tried again with what came meanwhile; a release asked since overrides a settle of the same request.
      for (const [reqId, micro] of settles)
        if (!this.releasing.has(reqId) && !this.settles.has(reqId)) this.settles.set(reqId, micro);
      for (const reqId of releasing) this.releasing.add(reqId);
      throw error;
    }
  }
}
