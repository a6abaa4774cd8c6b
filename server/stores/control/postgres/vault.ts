import type { VaultRecords } from '../records.js';
import type { VaultKeyRow } from '../vault.js';
import type { PgReadCache } from './read-cache.js';
import { cached, cacheOf, changes, first, rows, type Sql } from './sql.js';

export class PgVaultRepository implements VaultRecords {
  private readonly sealedCache: PgReadCache<Buffer | undefined> | null;

  constructor(private readonly sql: Sql) {
    this.sealedCache = cacheOf(sql, 1_000);
  }

  list(orgId: string): Promise<VaultKeyRow[]> {
    return rows(
      this.sql,
      'SELECT provider, key_hint, created_at, updated_at FROM vault_keys WHERE org_id = $1 ORDER BY provider COLLATE "C"',
      [orgId],
    );
  }

  sealed(orgId: string, provider: string): Promise<Buffer | undefined> {
    return cached(this.sealedCache, `${orgId}\n${provider}`, async () => {
      const row = await first<{ sealed: Buffer }>(
        this.sql,
        'SELECT sealed FROM vault_keys WHERE org_id = $1 AND provider = $2',
        [orgId, provider],
      );
      return row?.sealed;
    });
  }

  async put(orgId: string, provider: string, sealed: Buffer, keyHint: string, now: number): Promise<VaultKeyRow> {
    const row = await first<VaultKeyRow>(
      this.sql,
      `INSERT INTO vault_keys (org_id, provider, sealed, key_hint, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $5)
       ON CONFLICT (org_id, provider) DO UPDATE SET sealed = excluded.sealed, key_hint = excluded.key_hint,
         updated_at = excluded.updated_at
       RETURNING provider, key_hint, created_at, updated_at`,
      [orgId, provider, sealed, keyHint, now],
    );
    return row!;
  }

  async delete(orgId: string, provider: string): Promise<boolean> {
    return (
      (await changes(this.sql, 'DELETE FROM vault_keys WHERE org_id = $1 AND provider = $2', [orgId, provider])) === 1
    );
  }
}
