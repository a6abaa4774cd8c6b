import type { Database, Statement } from 'better-sqlite3';
import { ReadCache } from '../read-cache.js';

export type Environment = 'production' | 'development' | 'testing';

export interface KeyRow {
  id: string;
  org_id: string;
  project_id: string;
  name: string;
  key_prefix: string;
  environment: Environment;
  rate_limit_rpm: number;
  expires_at: number | null;
  credit_limit_micro: number | null;
  allowed_models: string | null;
  spent_micro: number;
  created_at: number;
}

export interface KeyOwner {
  id: string;
  org_id: string;
  project_id: string;
}

export interface NewKey {
  id: string;
  orgId: string;
  projectId: string;
  name: string;
  keyPrefix: string;
  secretHash: Buffer;
  environment: Environment;
  rateLimitRpm: number;
  expiresAt: number | null;
  creditLimitMicro: number | null;
  allowedModels: string[] | null;
  createdAt: number;
}

export interface KeyLimits {
  rateLimitRpm: number;
  expiresAt: number | null;
  creditLimitMicro: number | null;
}

const COLUMNS = `id, org_id, project_id, name, key_prefix, environment, rate_limit_rpm, expires_at,
  credit_limit_micro, allowed_models, spent_micro, created_at`;

/** Keys as the organisation sees them: a revoked key is gone from every read. */
export class KeyRepository {
  private readonly listActive: Statement<[string], KeyRow>;
  private readonly activeById: Statement<[string, string], KeyRow>;
  private readonly anyById: Statement<[string], KeyRow & { revoked_at: number | null }>;
  private readonly bySecret: Statement<[Buffer], KeyRow & { revoked_at: number | null }>;
  private readonly insert: Statement<unknown[]>;
  private readonly updateLimits: Statement<[number, number | null, number | null, string]>;
  private readonly markRevoked: Statement<[number, string, string]>;
  private readonly otherLimits: Statement<[string, string], { total: number }>;
  private readonly addSpend: Statement<[number, string]>;
  private readonly orgSpend: Statement<[string], { total: number }>;
  private readonly listCache: ReadCache<readonly Readonly<KeyRow>[]>;
  private readonly secretCache: ReadCache<Readonly<KeyRow & { revoked_at: number | null }> | undefined>;
  private readonly everyOwner: Statement<[], KeyOwner>;

  constructor(db: Database) {
    this.listActive = db.prepare(
      `SELECT ${COLUMNS} FROM api_keys WHERE org_id = ? AND revoked_at IS NULL ORDER BY created_at DESC, rowid DESC`,
    );
    this.activeById = db.prepare(`SELECT ${COLUMNS} FROM api_keys WHERE org_id = ? AND id = ? AND revoked_at IS NULL`);
    this.anyById = db.prepare(`SELECT ${COLUMNS}, revoked_at FROM api_keys WHERE id = ?`);
    this.bySecret = db.prepare(`SELECT ${COLUMNS}, revoked_at FROM api_keys WHERE secret_hash = ?`);
    this.insert = db.prepare(`INSERT INTO api_keys (id, org_id, project_id, name, key_prefix, secret_hash, environment,
      rate_limit_rpm, expires_at, credit_limit_micro, allowed_models, created_at)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
    this.updateLimits = db.prepare(
      'UPDATE api_keys SET rate_limit_rpm = ?, expires_at = ?, credit_limit_micro = ? WHERE id = ?',
    );
    this.markRevoked = db.prepare(
      'UPDATE api_keys SET revoked_at = ? WHERE org_id = ? AND id = ? AND revoked_at IS NULL',
    );
    this.otherLimits = db.prepare(`SELECT COALESCE(SUM(credit_limit_micro), 0) AS total FROM api_keys
      WHERE org_id = ? AND id != ? AND revoked_at IS NULL`);
    this.addSpend = db.prepare('UPDATE api_keys SET spent_micro = spent_micro + ? WHERE id = ?');
    this.orgSpend = db.prepare('SELECT COALESCE(SUM(spent_micro), 0) AS total FROM api_keys WHERE org_id = ?');
    this.listCache = new ReadCache(db, 1_000);
    this.secretCache = new ReadCache(db);
    this.everyOwner = db.prepare('SELECT id, org_id, project_id FROM api_keys');
  }

  /** Every key's organisation and project, revoked keys included: for the operator's import only. */
  async owners(): Promise<KeyOwner[]> {
    return this.everyOwner.all();
  }

  /** Shared with later callers until the store changes: read it, never modify it. */
  async list(orgId: string): Promise<readonly Readonly<KeyRow>[]> {
    return this.listCache.get(orgId, () => this.listActive.all(orgId));
  }

  async get(orgId: string, keyId: string): Promise<KeyRow | undefined> {
    return this.activeById.get(orgId, keyId);
  }

  /** Any key by id, revoked or not, whatever its organisation: for the operator's import. */
  async find(keyId: string): Promise<(KeyRow & { revoked_at: number | null }) | undefined> {
    return this.anyById.get(keyId);
  }

  /**
   * The key whose secret has this keyed hash, revoked or not: for the gateway's request path, so
   * answered from the cache until the store changes. Shared with later callers: never modify it.
   */
  async findBySecretHash(secretHash: Buffer): Promise<Readonly<KeyRow & { revoked_at: number | null }> | undefined> {
    return this.secretCache.get(secretHash.toString('base64'), () => this.bySecret.get(secretHash));
  }

  async create(key: NewKey): Promise<void> {
    this.insert.run(
      key.id,
      key.orgId,
      key.projectId,
      key.name,
      key.keyPrefix,
      key.secretHash,
      key.environment,
      key.rateLimitRpm,
      key.expiresAt,
      key.creditLimitMicro,
      key.allowedModels ? JSON.stringify(key.allowedModels) : null,
      key.createdAt,
    );
  }

  async setLimits(keyId: string, limits: KeyLimits): Promise<void> {
    this.updateLimits.run(limits.rateLimitRpm, limits.expiresAt, limits.creditLimitMicro, keyId);
  }

  async revoke(orgId: string, keyId: string, now: number): Promise<boolean> {
    return this.markRevoked.run(now, orgId, keyId).changes === 1;
  }

  /** Sum of the credit limits of the organisation's other active keys; unlimited keys add nothing. */
  async otherLimitsMicro(orgId: string, keyId: string): Promise<number> {
    return this.otherLimits.get(orgId, keyId)?.total ?? 0;
  }

  /** The settled spend of every key the organisation ever had, revoked ones included: what its deposits paid for. */
  async spentMicro(orgId: string): Promise<number> {
    return this.orgSpend.get(orgId)?.total ?? 0;
  }

  async settle(keyId: string, costMicro: number): Promise<void> {
    this.addSpend.run(costMicro, keyId);
  }
}
