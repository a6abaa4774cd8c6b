import type { Database } from 'better-sqlite3';
import { otherConnectionCommitted } from '../read-cache.js';
import { openSqlite } from '../sqlite.js';
import { AccountRepository } from './accounts.js';
import { ActivityRepository } from './activity.js';
import { registerActivityFunctions } from './activity-hash.js';
import { JoinPolicyRepository } from './join-policies.js';
import { KeyRepository } from './keys.js';
import { ModelRepository } from './models.js';
import { OrganizationRepository } from './organizations.js';
import { SessionRepository, type SessionLifetimes } from './sessions.js';
import { SettlementRepository } from './settlements.js';
import { VaultRepository } from './vault.js';

/** The control store: every record of the control plane except request telemetry. */
export class ControlStore {
  readonly accounts: AccountRepository;
  readonly activity: ActivityRepository;
  readonly joinPolicies: JoinPolicyRepository;
  readonly keys: KeyRepository;
  readonly models: ModelRepository;
  readonly organizations: OrganizationRepository;
  readonly sessions: SessionRepository;
  readonly settlements: SettlementRepository;
  readonly vault: VaultRepository;

  private constructor(
    readonly db: Database,
    lifetimes: SessionLifetimes,
  ) {
    this.accounts = new AccountRepository(db);
    this.activity = new ActivityRepository(db);
    this.joinPolicies = new JoinPolicyRepository(db);
    this.keys = new KeyRepository(db);
    this.models = new ModelRepository(db);
    this.organizations = new OrganizationRepository(db);
    this.sessions = new SessionRepository(db, lifetimes);
    this.settlements = new SettlementRepository(db);
    this.vault = new VaultRepository(db);
  }

  static open(path: string, lifetimes: SessionLifetimes): ControlStore {
    return new ControlStore(
      openSqlite(path, new URL('./migrations/', import.meta.url), { functions: registerActivityFunctions }),
      lifetimes,
    );
  }

  /**
   * Runs `work` in one IMMEDIATE transaction: the write lock is taken at BEGIN, so
   * read-check-write sequences (key limits against the budget) serialise across
   * processes too, and a change and its activity event commit together.
   */
  write<T>(work: () => T): T {
    return this.db.transaction(work).immediate();
  }

  /**
   * Another connection (a writing thread) has committed to this store: the caches read the store's
   * commit count again at their next read, rather than from the next turn of the event loop on.
   */
  committedElsewhere(): void {
    otherConnectionCommitted(this.db);
  }

  close(): void {
    this.db.close();
  }
}
