import { ledgerKey, type LedgerKeyRow, type SpendLedger } from '../spend-ledger.js';
import { rows, type Sql } from './sql.js';

/** The ledger of ../spend-ledger.ts, read inside the caller's snapshot transaction. */
export async function readSpendLedger(sql: Sql, orgId: string): Promise<SpendLedger> {
  const keys = await rows<LedgerKeyRow>(
    sql,
    `SELECT id, project_id, name, key_prefix, spent_micro, revoked_at IS NOT NULL AS revoked
     FROM api_keys WHERE org_id = $1 ORDER BY id COLLATE "C"`,
    [orgId],
  );
  const projects = await rows<SpendLedger['projects'][number]>(
    sql,
    'SELECT id, name FROM projects WHERE org_id = $1 ORDER BY name COLLATE "C", id COLLATE "C"',
    [orgId],
  );
  const settled = await rows<{ settlement: string }>(sql, 'SELECT settlement FROM settled_spend');
  return { keys: keys.map(ledgerKey), projects, settled: settled.map((row) => row.settlement) };
}
