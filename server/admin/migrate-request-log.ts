import { existsSync } from 'node:fs';
import {
  RepeatedRequest,
  recordRequestsFrom,
  type CopiedCells,
  type ImportProgress,
} from '../ingest/record-requests.js';
import type { ControlStore } from '../stores/control/store.js';
import { UnequalCopy } from '../stores/telemetry/postgres/request-import.js';
import { PgRequestLog } from '../stores/telemetry/postgres/request-log.js';
import { ROLLUP_TABLES } from '../stores/telemetry/rollup-writer.js';
import { fineCellsFrom } from '../stores/telemetry/fine-cells.js';
import { openTelemetry } from '../stores/telemetry/store.js';
import { storedCells } from './stored-cells.js';
import { storedRowsSource } from './stored-rows.js';

export type RequestLogCopy = { ok: true; rows: number } | { ok: false; error: string };

/**
 * Copies a data folder's `telemetry.db` into an empty request log on PostgreSQL: its rows, in one
 * import (whole or absent), and its rollup cells as they are (the file sums them in its rows'
 * transactions, by the same code as PostgreSQL's writers), checked: the file's day cells must
 * count its rows, and each table copied must add up as the file's. No spend is recorded: the
 * keys hold it already. The file is brought up to date first,
 * as a server opening it would; spend it still owes its keys must be settled before (a server's
 * start settles it), or it would be lost.
 */
export async function migrateRequestLog(
  control: ControlStore,
  telemetryPath: string,
  url: string,
  progress?: ImportProgress,
): Promise<RequestLogCopy> {
  if (!existsSync(telemetryPath)) return { ok: true, rows: 0 };
  const file = openTelemetry(telemetryPath);
  try {
    // The write lock for the whole copy: rows a server wrote meanwhile would be counted here and
    // missed by the copy, or the other way round. The copy's reader reads beside the lock (WAL).
    try {
      file.exec('BEGIN IMMEDIATE');
    } catch {
      return { ok: false, error: 'telemetry.db is being written (a server or an import): stop it, then copy' };
    }
    const rows = file.prepare('SELECT COUNT(*) FROM request_rows').pluck().get() as number;
    if ((file.prepare('SELECT COUNT(*) FROM spend_outbox').pluck().get() as number) > 0) {
      return {
        ok: false,
        error:
          'telemetry.db holds spend not yet settled into its keys: start the server on the data folder once, stop it, then copy',
      };
    }
    const cells = storedCells(file);
    const counted = cells.sums[ROLLUP_TABLES.findIndex((table) => table.name === 'rollup_day')];
    if (counted !== BigInt(rows)) {
      return { ok: false, error: `telemetry.db's rollups count ${counted} requests, its rows ${rows}: not copied` };
    }
    const horizons = new Map(
      (file.prepare('SELECT org_id, horizon FROM retention_horizons').raw().all() as [string, number][]).map(
        ([orgId, horizon]) => [orgId, horizon],
      ),
    );
    const fineFrom = fineCellsFrom(file);
    const bounds = { horizons, fineFrom: Number.isFinite(fineFrom) ? fineFrom : null };
    return await copyRows(control, telemetryPath, url, rows, cells, bounds, progress);
  } finally {
    file.close();
  }
}

async function copyRows(
  control: ControlStore,
  telemetryPath: string,
  url: string,
  rows: number,
  cells: CopiedCells,
  bounds: { horizons: ReadonlyMap<string, number>; fineFrom: number | null },
  progress: ImportProgress | undefined,
): Promise<RequestLogCopy> {
  // One for the copy's transaction, one to number search terms beside it.
  const log = await PgRequestLog.open(url, { connections: 2 });
  try {
    if ((await log.countRows()) > 0 || (await log.holdsCells())) {
      return { ok: false, error: 'the database already holds a request log: migrate-store copies into an empty one' };
    }
    await recordRequestsFrom(control, log, storedRowsSource(telemetryPath), {
      report: () => undefined,
      ...progress,
      copying: true,
      cells,
    });
    const stored = await log.countRows();
    if (stored !== rows) return { ok: false, error: `the file holds ${rows} request rows, the database ${stored}` };
    await log.recordCopiedBounds(bounds.horizons, bounds.fineFrom);
    return { ok: true, rows };
  } catch (error) {
    // The file's own rows repeat an id only if it was written by hand; its cells add up otherwise
    // in the database only if it held some already: nothing was copied.
    if (error instanceof RepeatedRequest || error instanceof UnequalCopy) return { ok: false, error: error.message };
    throw error;
  } finally {
    await log.close();
  }
}
