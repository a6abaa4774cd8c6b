import type { Database } from 'better-sqlite3';

/**
 * The control store's side of a reconciliation (server/analytics/reconcile.ts): every key of an
 * organisation, revoked ones too (their rows stay in the log), with its project and the spend
 * settled into it, and which outbox settlements that spend already holds. Read in one read
 * transaction, so the spend and the marks are the same moment's.
 */

export interface LedgerKey {
  id: string;
  projectId: string;
  name: string;
  keyPrefix: string;
  spentMicro: number;
  revoked: boolean;
}

export interface SpendLedger {
  keys: LedgerKey[];
  projects: { id: string; name: string }[];
  /** Settlement ids marked settled but still in the outbox (spend-outbox.ts): already in `spentMicro`. */
  settled: string[];
}

/** A key's row as both stores' ledgers read it: `revoked` is 1 or 0 (SQLite) or a boolean (PostgreSQL). */
export interface LedgerKeyRow {
  id: string;
  project_id: string;
  name: string;
  key_prefix: string;
  spent_micro: number;
  revoked: number | boolean;
}

export const ledgerKey = (row: LedgerKeyRow): LedgerKey => ({
  id: row.id,
  projectId: row.project_id,
  name: row.name,
  keyPrefix: row.key_prefix,
  spentMicro: row.spent_micro,
  revoked: row.revoked === 1 || row.revoked === true,
});

export function readSpendLedger(db: Database, orgId: string): SpendLedger {
  return db.transaction(() => ({
    keys: db
      .prepare<[string], LedgerKeyRow>(
        `SELECT id, project_id, name, key_prefix, spent_micro, revoked_at IS NOT NULL AS revoked
         FROM api_keys WHERE org_id = ? ORDER BY id`,
      )
      .all(orgId)
      .map(ledgerKey),
    projects: db
      .prepare<[string], SpendLedger['projects'][number]>(
        'SELECT id, name FROM projects WHERE org_id = ? ORDER BY name, id',
      )
      .all(orgId),
    settled: db.prepare<[], string>('SELECT settlement FROM settled_spend').pluck().all(),
  }))();
}
