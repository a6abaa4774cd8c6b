import type { Database } from 'better-sqlite3';
import { codeOf } from './request-rows.js';

/**
 * How many term ids one transaction looks at: a few batches of rows' worth (200 rows, a term or
 * none each: a row's own request id and trace id are no terms) when one organisation writes.
 */
export const SWEEP_TERM_IDS = 1_000;

/**
 * Deletes an organisation's search terms whose row retention deleted (expire-rows.ts), in one
 * short transaction looking at the next SWEEP_TERM_IDS term ids after where the last one stopped
 * (`retention_terms`), and says how many went, and whether there is more to look at. A term goes
 * when no row holds it any more: not shared (a shared term is held by rows of search_rows too,
 * and stays) and its row gone.
 *
 * Terms are numbered as their rows are written: in id order, their rows come in rowid order. The
 * sweep stops at the organisation's first term whose row is kept, and takes up there next time.
 * The gateway writes rows in time order, and retention deletes the oldest first, so that term is
 * the first of the rows kept. Rows imported out of time order hold the sweep at the first row kept
 * among them until that row's turn comes: their terms go late, never wrongly, and until then stay
 * unreachable, as every entry of a deleted row is (a search reads the row an entry leads to). The
 * newest term is never deleted: SQLite would give its id to the next term, under the old one's
 * signature bits.
 */
export function expireTerms(db: Database, orgId: string): { terms: number; more: boolean } {
  const swept = db.prepare<[string], number>('SELECT swept FROM retention_terms WHERE org_id = ?').pluck();
  const newest = db.prepare<[], number | null>('SELECT MAX(id) FROM search_terms').pluck();
  const orgCodeOf = db.prepare<[string], number | null>(`SELECT ${codeOf('?')}`).pluck();
  const next = db.prepare<[number, number], { id: number; org_code: number; row: number; shared: number }>(
    'SELECT id, org_code, row, shared FROM search_terms WHERE id > ? AND id < ? ORDER BY id',
  );
  const held = db.prepare<[number], number>('SELECT 1 FROM request_rows WHERE id = ?').pluck();
  const remove = db.prepare<[number]>('DELETE FROM search_terms WHERE id = ?');
  const record = db.prepare<[string, number]>(
    `INSERT INTO retention_terms (org_id, swept) VALUES (?, ?)
     ON CONFLICT (org_id) DO UPDATE SET swept = MAX(swept, excluded.swept)`,
  );
  return db
    .transaction(() => {
      const from = swept.get(orgId) ?? 0;
      const last = newest.get() ?? 0;
      const to = Math.min(from + SWEEP_TERM_IDS + 1, last);
      let reached = from;
      let terms = 0;
      const orgCode = orgCodeOf.get(orgId);
      for (const term of next.all(from, to)) {
        if (term.org_code === orgCode && !term.shared) {
          if (held.get(term.row) !== undefined) {
            record.run(orgId, reached);
            return { terms, more: false };
          }
          remove.run(term.id);
          terms++;
        }
        reached = term.id;
      }
      // Ids with no term (deleted, or never written) are passed over too.
      reached = Math.max(reached, to - 1);
      record.run(orgId, reached);
      return { terms, more: to < last };
    })
    .immediate();
}
