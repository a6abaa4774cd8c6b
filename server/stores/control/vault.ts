import type { Database, Statement } from 'better-sqlite3';
import { ReadCache } from '../read-cache.js';

export interface VaultKeyRow {
  provider: string;
  key_hint: string;
  created_at: number;
  updated_at: number;
}

/** Sealed provider keys. Only the sealed bytes are stored; this repository never sees plaintext. */
export class VaultRepository {
  private readonly listOf: Statement<[string], VaultKeyRow>;
  private readonly sealedOf: Statement<[string, string], { sealed: Buffer }>;
  private readonly upsert: Statement<[string, string, Buffer, string, number, number]>;
  private readonly remove: Statement<[string, string]>;
  private readonly sealedCache: ReadCache<Buffer | undefined>;

  constructor(db: Database) {
    this.listOf = db.prepare(
      'SELECT provider, key_hint, created_at, updated_at FROM vault_keys WHERE org_id = ? ORDER BY provider',
    );
    this.sealedOf = db.prepare('SELECT sealed FROM vault_keys WHERE org_id = ? AND provider = ?');
    this.upsert = db.prepare(`INSERT INTO vault_keys (org_id, provider, sealed, key_hint, created_at, updated_at)
      VALUES (?, ?, ?, ?, ?, ?)
      ON CONFLICT (org_id, provider) DO UPDATE SET sealed = excluded.sealed, key_hint = excluded.key_hint,
        updated_at = excluded.updated_at
      RETURNING provider, key_hint, created_at, updated_at`);
    this.remove = db.prepare('DELETE FROM vault_keys WHERE org_id = ? AND provider = ?');
    this.sealedCache = new ReadCache(db, 1_000);
  }

  async list(orgId: string): Promise<VaultKeyRow[]> {
    return this.listOf.all(orgId);
  }

  /**
   * The sealed key the organisation holds for `provider`, for the gateway to open in memory (read
   * on its request path, so kept sealed until the store changes).
   */
  async sealed(orgId: string, provider: string): Promise<Buffer | undefined> {
    return this.sealedCache.get(`${orgId}\n${provider}`, () => this.sealedOf.get(orgId, provider)?.sealed);
  }

  /** Stores or rotates; a rotation keeps the original `created_at`. */

  async put(orgId: string, provider: string, sealed: Buffer, keyHint: string, now: number): Promise<VaultKeyRow> {
    return this.upsert.get(orgId, provider, sealed, keyHint, now, now) as VaultKeyRow;
  }

  async delete(orgId: string, provider: string): Promise<boolean> {
    return this.remove.run(orgId, provider).changes === 1;
  }
}
