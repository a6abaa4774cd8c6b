import type pg from 'pg';
import { migratePostgres, openPool } from '../../postgres.js';
import type { SpendLedger } from '../spend-ledger.js';
import type { ControlLocation, ControlRecords, ControlStore } from '../store.js';
import type { SessionLifetimes } from '../sessions.js';
import { PgAccountRepository } from './accounts.js';
import { PgAdmissionQuota } from './admission-quota.js';
import { PgActivityRepository } from './activity.js';
import { PgJoinPolicyRepository } from './join-policies.js';
import { PgKeyRepository } from './keys.js';
import { PgOrganizationRepository } from './organizations.js';
import { PgRoutesRepository, seedRoutes } from './route-documents.js';
import { PgSessionRepository } from './sessions.js';
import { ChangeCount } from './read-cache.js';
import { PgSettlementRepository } from './settlements.js';
import { readSpendLedger } from './spend-ledger.js';
import type { Sql } from './sql.js';
import { PgVaultRepository } from './vault.js';

/**
 * Every control write, on every replica, takes this one lock first: the same single writer the
 * SQLite store has, so the rules that rest on it (key limits within the budget, one chain per
 * trail, a refresh token rotated once) hold across processes exactly as they do there.
 */
export const WRITE_LOCK = "SELECT pg_advisory_xact_lock(hashtext('gateway-console control write'))";

/** Brings the control store on `pool` up to date: its SQL files, and what they cannot do (postgres.ts). */
export function migrateControl(pool: pg.Pool): Promise<void> {
  return migratePostgres(pool, 'control', new URL('../migrations-postgres/', import.meta.url), { 4: seedRoutes });
}

/** One snapshot of the store for every statement of a read. */
const SNAPSHOT = 'BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY';

/** The repositories over one `Sql`: the pool's, or a transaction's client. */
class Repositories {
  readonly accounts: PgAccountRepository;
  readonly activity: PgActivityRepository;
  readonly joinPolicies: PgJoinPolicyRepository;
  readonly keys: PgKeyRepository;
  readonly organizations: PgOrganizationRepository;
  readonly routes: PgRoutesRepository;
  readonly sessions: PgSessionRepository;
  readonly settlements: PgSettlementRepository;
  readonly vault: PgVaultRepository;

  constructor(sql: Sql, lifetimes: SessionLifetimes) {
    this.accounts = new PgAccountRepository(sql);
    this.activity = new PgActivityRepository(sql);
    this.joinPolicies = new PgJoinPolicyRepository(sql);
    this.keys = new PgKeyRepository(sql);
    this.organizations = new PgOrganizationRepository(sql);
    this.routes = new PgRoutesRepository(sql);
    this.sessions = new PgSessionRepository(sql, lifetimes);
    this.settlements = new PgSettlementRepository(sql);
    this.vault = new PgVaultRepository(sql);
  }
}

/** One open transaction on one client: a nested write is a savepoint. */
class PgTransaction extends Repositories implements ControlRecords {
  private savepoints = 0;

  constructor(
    private readonly client: pg.PoolClient,
    lifetimes: SessionLifetimes,
  ) {
    super({ client, inTransaction: true }, lifetimes);
  }

  async write<T>(work: (tx: ControlRecords) => Promise<T>): Promise<T> {
    const name = `nested_${++this.savepoints}`;
    await this.client.query(`SAVEPOINT ${name}`);
    try {
      const result = await work(this);
      await this.client.query(`RELEASE SAVEPOINT ${name}`);
      return result;
    } catch (error) {
      // A failed rollback (the connection lost) ends the transaction anyway: the first error is the one told.
      await this.client.query(`ROLLBACK TO SAVEPOINT ${name}`).catch(() => undefined);
      throw error;
    } finally {
      this.savepoints -= 1;
    }
  }

  read<T>(work: (tx: ControlRecords) => Promise<T>): Promise<T> {
    return work(this);
  }
}

/**
 * The control store on PostgreSQL: the same records as the SQLite store, for control planes
 * run as several replicas on one database. Reads outside a transaction take a pooled connection
 * each; a transaction keeps one connection from BEGIN to COMMIT.
 */
export class PgControlStore extends Repositories implements ControlStore {
  /** Settles when the write last asked for has ended, however it ended. */
  private writes: Promise<unknown> = Promise.resolve();

  readonly location: ControlLocation;
  readonly sharedQuota: PgAdmissionQuota;
  private readonly changes: ChangeCount;

  private constructor(
    url: string,
    private readonly pool: pg.Pool,
    private readonly lifetimes: SessionLifetimes,
  ) {
    const changes = new ChangeCount(pool);
    super({ client: pool, inTransaction: false, changes }, lifetimes);
    this.changes = changes;
    this.location = { url };
    this.sharedQuota = new PgAdmissionQuota(openPool(url, { applicationName: 'gateway-console admissions' }));
  }

  static async open(url: string, lifetimes: SessionLifetimes): Promise<PgControlStore> {
    const pool = openPool(url);
    try {
      await migrateControl(pool);
      return new PgControlStore(url, pool, lifetimes);
    } catch (error) {
      await pool.end();
      throw error;
    }
  }

  /**
   * Writes queue in the process before they take a connection: a write waiting for another
   * replica's lock holds its connection, and the pool's other connections stay for reads.
   */
  write<T>(work: (tx: ControlRecords) => Promise<T>): Promise<T> {
    const run = () =>
      this.transaction('BEGIN', WRITE_LOCK, (client) => work(new PgTransaction(client, this.lifetimes))).finally(
        // Reads later in this turn of the event loop see the commit.
        this.changes.forget,
      );
    const result = this.writes.then(run, run);
    this.writes = result.catch(() => undefined);
    return result;
  }

  read<T>(work: (tx: ControlRecords) => Promise<T>): Promise<T> {
    return this.transaction(SNAPSHOT, null, (client) => work(new PgTransaction(client, this.lifetimes)));
  }

  spendLedger(orgId: string): Promise<SpendLedger> {
    return this.transaction(SNAPSHOT, null, (client) => readSpendLedger({ client, inTransaction: true }, orgId));
  }

  committedElsewhere(): void {
    this.changes.forget();
  }

  /** Waits for the writes asked for so far, then ends the pool. */
  async close(): Promise<void> {
    await this.writes;
    // Releases left unwritten would hold their keys' credit until the holds lapse.
    await this.sharedQuota.close();
    await this.pool.end();
  }

  private async transaction<T>(
    begin: string,
    lock: string | null,
    work: (client: pg.PoolClient) => Promise<T>,
  ): Promise<T> {
    const client = await this.pool.connect();
    let broken: Error | undefined;
    try {
      await client.query(begin).catch((error: Error) => {
        broken = error;
        throw error;
      });
      try {
        if (lock) await client.query(lock);
        const result = await work(client);
        // A statement that failed inside `work`, its error caught there and not in a nested write,
        // aborted the transaction: PostgreSQL then answers COMMIT with a rollback, and no error.
        const ended = await client.query('COMMIT');
        if (ended.command === 'ROLLBACK') throw new Error('the control transaction was aborted by an earlier error');
        return result;
      } catch (error) {
        await client.query('ROLLBACK').catch((rollback: Error) => (broken = rollback));
        throw error;
      }
    } finally {
      // A connection that failed to begin or to roll back is in an unknown state: the pool drops it.
      client.release(broken);
    }
  }
}
