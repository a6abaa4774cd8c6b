import pg from 'pg';
import { openPool } from '../stores/postgres.js';
import type { Analytics } from './analytics.js';
import { AnalyticsUnavailable, type PoolLimits } from './pool.js';
import { PgSql } from './postgres-sql.js';
import { AnalyticsQueries } from './queries.js';
import type { AnalyticsQuery, AnalyticsResult } from './query-types.js';

/**
 * SQLSTATE classes that say the database cannot answer now, rather than that the query is wrong:
 * connection (08), resources (53), operator intervention (57: a statement past its timeout, a
 * shutdown), system (58).
 */
const UNAVAILABLE_CLASSES = ['08', '53', '57', '58'];

/** The driver's own words for a connection lost or never made (it gives them no code). */
const CONNECTION_LOST =
  /^Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error/;

/** Whether `error` says the database cannot answer now (503), rather than that the query is wrong (500). */
export function isUnavailable(error: unknown): boolean {
  if (error instanceof pg.DatabaseError) return UNAVAILABLE_CLASSES.includes((error.code ?? '').slice(0, 2));
  // A socket's error (ECONNREFUSED, ECONNRESET, EPIPE, ENOTFOUND...).
  if (typeof (error as NodeJS.ErrnoException).syscall === 'string') return true;
  return error instanceof Error && CONNECTION_LOST.test(error.message);
}

/**
 * The analytics on a PostgreSQL request log: the database does the work, so a query holds one of
 * the pool's connections rather than a thread. As the SQLite pool: a bounded queue (503 beyond
 * it), a job whose caller has gone dropped before it starts, and a deadline, here the
 * connections' `statement_timeout` and, for a query of several statements, the same time over all.
 */
export class PgAnalytics implements Analytics {
  private waiting = 0;

  private constructor(
    private readonly pool: pg.Pool,
    private readonly limits: PoolLimits,
  ) {}

  static open(url: string, limits: PoolLimits): PgAnalytics {
    const pool = openPool(url, {
      max: limits.size,
      applicationName: 'gateway-console analytics',
      statementTimeoutMs: limits.timeoutMs,
      connectTimeoutMs: limits.timeoutMs,
    });
    return new PgAnalytics(pool, limits);
  }

  async run<Q extends AnalyticsQuery>(query: Q, signal?: AbortSignal): Promise<AnalyticsResult<Q>> {
    if (signal?.aborted) throw new AnalyticsUnavailable('the caller went away');
    if (this.waiting >= this.limits.maxQueued) throw new AnalyticsUnavailable('too many analytics queries are waiting');
    let client: pg.PoolClient;
    this.waiting++;
    try {
      client = await this.pool.connect();
    } catch (error) {
      throw new AnalyticsUnavailable((error as Error).message);
    } finally {
      this.waiting--;
    }
    if (signal?.aborted) {
      client.release();
      throw new AnalyticsUnavailable('the caller went away');
    }
    let deadline: NodeJS.Timeout | undefined;
    let failed: Error | undefined;
    try {
      const late = new Promise<never>((_, reject) => {
        deadline = setTimeout(
          () => reject(new AnalyticsUnavailable('the analytics query ran past its time limit')),
          this.limits.timeoutMs,
        );
      });
      return await Promise.race([new AnalyticsQueries(new PgSql(client)).run(query), late]);
    } catch (error) {
      failed = error as Error;
      if (error instanceof AnalyticsUnavailable) throw error;
      if (isUnavailable(error)) throw new AnalyticsUnavailable((error as Error).message);
      throw error;
    } finally {
      clearTimeout(deadline);
      // A connection whose query failed or ran late is closed, not handed to the next query.
      client.release(failed);
    }
  }

  /** Opens the pool's connections now, so that the first screens after a start do not wait for them. */
  warm(): void {
    const clients = Array.from({ length: this.limits.size }, () => this.pool.connect());
    void Promise.allSettled(clients).then((settled) => {
      for (const result of settled) if (result.status === 'fulfilled') result.value.release();
    });
  }

  close(): Promise<void> {
    return this.pool.end();
  }
}
