import type { Database } from 'better-sqlite3';
import { codeOf } from './request-rows.js';

/**
 * Deletes at most `limit` of an organisation's rows older than `before` (epoch ms), in one short
 * transaction, and says how many went. Rollups, dashboard cells and the spend they made stay:
 * a window past the retention horizon is counted from them (server/analytics/windows.ts).
 *
 * The rows' search-index entries stay too, unreachable: every read of rows is bounded below by
 * the horizon, and the index's entries lead to rows (by rowid) a read then checks. Deleting them
 * would need each row's shared terms as they were written, which the index does not keep.
 */
export function expireRows(db: Database, orgId: string, before: number, limit: number): number {
  // requests_by_org (org_code, ts): the oldest rows first, read from the index alone. The row
  // with the largest rowid stays whatever its time (an old row imported last): SQLite gives a
  // new row the largest rowid plus one, so deleting it would hand its rowid, and the search
  // entries that still lead there, to the next row written.
  const remove = db.prepare<[string, number, number]>(
    `DELETE FROM request_rows WHERE id IN (
       SELECT id FROM request_rows
       WHERE org_code = ${codeOf('?')} AND ts < ?
         AND id < (SELECT MAX(id) FROM request_rows)
       ORDER BY ts LIMIT ?)`,
  );
  // Recorded first, in the same transaction: no row at or after the recorded horizon is ever deleted.
  const record = db.prepare<[string, number]>(
    `INSERT INTO retention_horizons (org_id, horizon) VALUES (?, ?)
     ON CONFLICT (org_id) DO UPDATE SET horizon = MAX(horizon, excluded.horizon)`,
  );
  return db
    .transaction(() => {
      record.run(orgId, before);
      return remove.run(orgId, before, limit).changes;
    })
    .immediate();
}
