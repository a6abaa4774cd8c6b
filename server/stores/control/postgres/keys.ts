import type { KeyLimits, KeyOwner, KeyRow, NewKey } from '../keys.js';
import type { KeyRecords } from '../records.js';
import type { PgReadCache } from './read-cache.js';
import { cached, cacheOf, changes, first, rows, type Sql } from './sql.js';

const COLUMNS = `id, org_id, project_id, name, key_prefix, environment, rate_limit_rpm, expires_at,
  credit_limit_micro, allowed_models, spent_micro, created_at`;

type WithRevocation = KeyRow & { revoked_at: number | null };

export class PgKeyRepository implements KeyRecords {
  private readonly listCache: PgReadCache<readonly Readonly<KeyRow>[]> | null;
  private readonly secretCache: PgReadCache<Readonly<WithRevocation> | undefined> | null;

  constructor(private readonly sql: Sql) {
    this.listCache = cacheOf(sql, 1_000);
    this.secretCache = cacheOf(sql);
  }

  owners(): Promise<KeyOwner[]> {
    return rows(this.sql, 'SELECT id, org_id, project_id FROM api_keys');
  }

  list(orgId: string): Promise<readonly Readonly<KeyRow>[]> {
    return cached(this.listCache, orgId, () =>
      rows(
        this.sql,
        `SELECT ${COLUMNS} FROM api_keys WHERE org_id = $1 AND revoked_at IS NULL ORDER BY created_at DESC, serial DESC`,
        [orgId],
      ),
    );
  }

  get(orgId: string, keyId: string): Promise<KeyRow | undefined> {
    return first(this.sql, `SELECT ${COLUMNS} FROM api_keys WHERE org_id = $1 AND id = $2 AND revoked_at IS NULL`, [
      orgId,
      keyId,
    ]);
  }

  find(keyId: string): Promise<WithRevocation | undefined> {
    return first(this.sql, `SELECT ${COLUMNS}, revoked_at FROM api_keys WHERE id = $1`, [keyId]);
  }

  findBySecretHash(secretHash: Buffer): Promise<Readonly<WithRevocation> | undefined> {
    return cached(this.secretCache, secretHash.toString('base64'), () =>
      first(this.sql, `SELECT ${COLUMNS}, revoked_at FROM api_keys WHERE secret_hash = $1`, [secretHash]),
    );
  }

  async create(key: NewKey): Promise<void> {
    await changes(
      this.sql,
      `INSERT INTO api_keys (id, org_id, project_id, name, key_prefix, secret_hash, environment,
        rate_limit_rpm, expires_at, credit_limit_micro, allowed_models, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
      [
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
      ],
    );
  }

  async setLimits(keyId: string, limits: KeyLimits): Promise<void> {
    await changes(
      this.sql,
      'UPDATE api_keys SET rate_limit_rpm = $1, expires_at = $2, credit_limit_micro = $3 WHERE id = $4',
      [limits.rateLimitRpm, limits.expiresAt, limits.creditLimitMicro, keyId],
    );
  }

  async revoke(orgId: string, keyId: string, now: number): Promise<boolean> {
    const changed = await changes(
      this.sql,
      'UPDATE api_keys SET revoked_at = $1 WHERE org_id = $2 AND id = $3 AND revoked_at IS NULL',
      [now, orgId, keyId],
    );
    return changed === 1;
  }

  async otherLimitsMicro(orgId: string, keyId: string): Promise<number> {
    const row = await first<{ total: number }>(
      this.sql,
      `SELECT COALESCE(SUM(credit_limit_micro), 0)::bigint AS total FROM api_keys
       WHERE org_id = $1 AND id != $2 AND revoked_at IS NULL`,
      [orgId, keyId],
    );
    return row?.total ?? 0;
  }

  async spentMicro(orgId: string): Promise<number> {
    const row = await first<{ total: number }>(
      this.sql,
      'SELECT COALESCE(SUM(spent_micro), 0)::bigint AS total FROM api_keys WHERE org_id = $1',
      [orgId],
    );
    return row?.total ?? 0;
  }

  async settle(keyId: string, costMicro: number): Promise<void> {
    await changes(this.sql, 'UPDATE api_keys SET spent_micro = spent_micro + $1 WHERE id = $2', [costMicro, keyId]);
  }
}
