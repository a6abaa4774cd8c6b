import type { Database } from 'better-sqlite3';
import type { AdmissionQuota } from './admission-quota.js';
import { otherConnectionCommitted } from '../read-cache.js';
import { openSqlite } from '../sqlite.js';
import { AccountRepository } from './accounts.js';
import { ActivityRepository } from './activity.js';
import { registerActivityFunctions } from './activity-hash.js';
import { JoinPolicyRepository } from './join-policies.js';
import { KeyRepository } from './keys.js';
import { OrganizationRepository } from './organizations.js';
import { RoutesRepository, seedRoutes } from './route-documents.js';
import { SessionRepository, type SessionLifetimes } from './sessions.js';
import { SettlementRepository } from './settlements.js';
import { readSpendLedger, type SpendLedger } from './spend-ledger.js';
import { VaultRepository } from './vault.js';
import type {
  AccountRecords,
  ActivityRecords,
  JoinPolicyRecords,
  KeyRecords,
  OrganizationRecords,
  RoutesRecords,
  SessionRecords,
  SettlementRecords,
  VaultRecords,
} from './records.js';

/**
 * The control store's records as one caller sees them: the store itself (reads of what is
 * committed) or one of its transactions. Every repository answers asynchronously, so that a
 * store over a network (PostgreSQL) can stand behind the same interface; the domain and the
 * routes take a `ControlRecords` and never know whether they run inside a transaction.
 */
export interface ControlRecords {
  readonly accounts: AccountRecords;
  readonly activity: ActivityRecords;
  readonly joinPolicies: JoinPolicyRecords;
  readonly keys: KeyRecords;
  readonly organizations: OrganizationRecords;
  /** The routes document's versions: the newest is what every gateway serves. */
  readonly routes: RoutesRecords;
  readonly sessions: SessionRecords;
  readonly settlements: SettlementRecords;
  readonly vault: VaultRecords;
  /**
   * Runs `work` in one transaction that holds the store's write lock from its start, so
   * read-check-write sequences (key limits against the budget) serialise across processes
   * too, and a change and its activity event commit together. Inside a transaction it runs
   * in a savepoint: a throw undoes `work`'s writes and leaves the rest of the transaction be.
   * `work` awaits its reads and writes one at a time, never several at once, and catches a
   * failed one only around a nested write: on PostgreSQL a failed statement ends the transaction.
   */
  write<T>(work: (tx: ControlRecords) => Promise<T>): Promise<T>;
  /** Runs `work` on one snapshot of the store, so what it reads in several statements agrees. */
  read<T>(work: (tx: ControlRecords) => Promise<T>): Promise<T>;
}

/** Where a control store is: a SQLite file, or a PostgreSQL database (postgres://…). */
export type ControlLocation = { path: string } | { url: string };

/**
 * A control store as the server holds it, on either backend: its records, plus what the server
 * does with the store as a whole.
 */
export interface ControlStore extends ControlRecords {
  /** Where it is: what another thread or process opens to reach the same records. */
  readonly location: ControlLocation;
  /**
   * The keys' rate and credit holds as every process on this store shares them (PostgreSQL's
   * replicas); null when one process serves the store and keeps them in its memory (SQLite).
   */
  readonly sharedQuota: AdmissionQuota | null;
  /** The keys' settled spend, their projects and the settlement marks, at one moment (reconcile.ts). */
  spendLedger(orgId: string): Promise<SpendLedger>;
  /**
   * Another connection (a writing thread) has committed to this store: answers kept until the
   * store changes are read again at their next use.
   */
  committedElsewhere(): void;
  /** Waits for the transactions asked for so far, then closes the store's connections. */
  close(): Promise<void>;
}

/** What the control store's migrations do beyond their SQL (migrate.ts). */
const MIGRATION_STEPS = { 6: seedRoutes };

/** The repositories of one connection. */
class Repositories {
  readonly accounts: AccountRepository;
  readonly activity: ActivityRepository;
  readonly joinPolicies: JoinPolicyRepository;
  readonly keys: KeyRepository;
  readonly organizations: OrganizationRepository;
  readonly routes: RoutesRepository;
  readonly sessions: SessionRepository;
  readonly settlements: SettlementRepository;
  readonly vault: VaultRepository;

  constructor(db: Database, lifetimes: SessionLifetimes) {
    this.accounts = new AccountRepository(db);
    this.activity = new ActivityRepository(db);
    this.joinPolicies = new JoinPolicyRepository(db);
    this.keys = new KeyRepository(db);
    this.organizations = new OrganizationRepository(db);
    this.routes = new RoutesRepository(db);
    this.sessions = new SessionRepository(db, lifetimes);
    this.settlements = new SettlementRepository(db);
    this.vault = new VaultRepository(db);
  }
}

/** The writing connection inside an open transaction: a nested write is a savepoint. */
class Transaction extends Repositories implements ControlRecords {
  private savepoints = 0;

  constructor(
    private readonly db: Database,
    lifetimes: SessionLifetimes,
  ) {
    super(db, lifetimes);
  }

  async write<T>(work: (tx: ControlRecords) => Promise<T>): Promise<T> {
    const name = `nested_${++this.savepoints}`;
    this.db.exec(`SAVEPOINT ${name}`);
    try {
      const result = await work(this);
      this.db.exec(`RELEASE ${name}`);
      return result;
    } catch (error) {
      // An error that ended the whole transaction took the savepoint with it: the error told is the first.
      if (this.db.inTransaction) {
        this.db.exec(`ROLLBACK TO ${name}`);
        this.db.exec(`RELEASE ${name}`);
      }
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
 * The control store: every record of the control plane except request telemetry, in one
 * SQLite file. It holds two connections. Reads outside a transaction go to one that never
 * writes (`query_only`), so they see only what is committed, even while a transaction is open
 * across the awaits of its work. Transactions go to the other, one at a time in the order
 * they were asked for: a connection has one transaction, and every request of the process
 * shares it.
 */
export class SqliteControlStore extends Repositories implements ControlStore {
  private readonly transaction: Transaction;
  /** Settles when the transaction last asked for has ended, however it ended. */
  private queue: Promise<unknown> = Promise.resolve();

  readonly location: ControlLocation;
  readonly sharedQuota = null;

  private constructor(
    path: string,
    /** The reading connection: for tests and tools that read the file's SQL directly. */
    readonly db: Database,
    private readonly writer: Database,
    lifetimes: SessionLifetimes,
  ) {
    super(db, lifetimes);
    this.location = { path };
    this.transaction = new Transaction(writer, lifetimes);
  }

  static open(path: string, lifetimes: SessionLifetimes): SqliteControlStore {
    const migrations = new URL('./migrations/', import.meta.url);
    const options = { functions: registerActivityFunctions, steps: MIGRATION_STEPS };
    const writer = openSqlite(path, migrations, options);
    try {
      const reader = openSqlite(path, migrations, options);
      reader.pragma('query_only = ON');
      return new SqliteControlStore(path, reader, writer, lifetimes);
    } catch (error) {
      writer.close();
      throw error;
    }
  }

  write<T>(work: (tx: ControlRecords) => Promise<T>): Promise<T> {
    return this.inTurn('BEGIN IMMEDIATE', work);
  }

  read<T>(work: (tx: ControlRecords) => Promise<T>): Promise<T> {
    return this.inTurn('BEGIN DEFERRED', work);
  }

  async spendLedger(orgId: string): Promise<SpendLedger> {
    return readSpendLedger(this.db, orgId);
  }

  /** The caches read the store's commit count again at their next read, not from the next turn of the event loop on. */
  committedElsewhere(): void {
    otherConnectionCommitted(this.db);
  }

  async close(): Promise<void> {
    await this.queue.catch(() => undefined);
    this.writer.close();
    this.db.close();
  }

  private inTurn<T>(begin: string, work: (tx: ControlRecords) => Promise<T>): Promise<T> {
    const run = async (): Promise<T> => {
      this.writer.exec(begin);
      try {
        const result = await work(this.transaction);
        this.writer.exec('COMMIT');
        return result;
      } catch (error) {
        if (this.writer.inTransaction) this.writer.exec('ROLLBACK');
        throw error;
      } finally {
        // Reads later in this turn of the event loop see the commit (see ReadCache).
        this.committedElsewhere();
      }
    };
    const result = this.queue.then(run, run);
    this.queue = result.catch(() => undefined);
    return result;
  }
}
