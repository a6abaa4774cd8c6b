import type { Database } from 'better-sqlite3';
import { GRAINS, THINNED_TABLES } from './rollup-grains.js';

/**
 * The fine grains' usage cells kept for recent days only (rollup-grains.ts, FINE_CELL_DAYS,
 * THINNED_TABLES; migrations/023_fine_cells.sql): where they start, and their deletion before
 * that, an hour of one organisation's cells at a time, on the thread that writes the gateways' rows.
 */

const HOUR_MS = 3_600_000;

/** The thinned tables, each with whether its key puts `dim` before `bucket` (the dimension tables). */
const FINE_TABLES = THINNED_TABLES.map((name) => ({ name, dims: GRAINS.some((grain) => grain.dims === name) }));

/** Of one organisation, in a table keyed as `table` is: `dim IN` lets the key be read from each dimension's start. */
const ofOrg = (table: { dims: boolean }) => `org_id = ? ${table.dims ? 'AND dim IN (0, 1, 2, 3)' : ''}`;

/** From when the fine cells are whole (epoch ms); -Infinity when every cell is kept. */
export function fineCellsFrom(db: Database): number {
  const since = db.prepare('SELECT since FROM fine_cells').pluck().get() as number | undefined;
  return since ?? -Infinity;
}

/** Records that fine cells before `since` may go: never moved earlier. */
export function recordFineCellsFrom(db: Database, since: number): void {
  db.prepare(
    `INSERT INTO fine_cells (id, since) VALUES (1, ?)
     ON CONFLICT (id) DO UPDATE SET since = max(since, excluded.since)`,
  ).run(since);
}

/**
 * Records `since` (as `recordFineCellsFrom`), then deletes the oldest hour of fine cells before
 * it of the organisation that has the oldest, in one short transaction: how many went, and
 * whether more may be left.
 */
export function thinFineCells(db: Database, since: number): { cells: number; more: boolean } {
  // The organisations from the day cells' key, one seek each rather than a scan of the table.
  const orgs = db
    .prepare(
      `WITH RECURSIVE orgs (id) AS (
         SELECT MIN(org_id) FROM rollup_day
         UNION ALL SELECT (SELECT MIN(org_id) FROM rollup_day WHERE org_id > orgs.id) FROM orgs WHERE orgs.id IS NOT NULL)
       SELECT id FROM orgs WHERE id IS NOT NULL`,
    )
    .pluck();
  // Every row adds to the organisation's own cell (dim 0): the oldest bucket of any dimension is its.
  const oldest = FINE_TABLES.map((table) =>
    db.prepare(`SELECT MIN(bucket) FROM ${table.name} WHERE org_id = ? ${table.dims ? 'AND dim = 0' : ''}`).pluck(),
  );
  const deletions = FINE_TABLES.map((table) =>
    db.prepare(`DELETE FROM ${table.name} WHERE ${ofOrg(table)} AND bucket < ?`),
  );
  return db
    .transaction(() => {
      recordFineCellsFrom(db, since);
      const before = fineCellsFrom(db);
      let first: { orgId: string; bucket: number } | null = null;
      for (const orgId of orgs.all() as string[]) {
        for (const statement of oldest) {
          const bucket = statement.get(orgId) as number | null;
          if (bucket !== null && bucket < before && (first === null || bucket < first.bucket))
            first = { orgId, bucket };
        }
      }
      if (first === null) return { cells: 0, more: false };
      const to = Math.min(before, first.bucket - (first.bucket % HOUR_MS) + HOUR_MS);
      let cells = 0;
      for (const statement of deletions) cells += statement.run(first.orgId, to).changes;
      return { cells, more: true };
    })
    .immediate();
}
