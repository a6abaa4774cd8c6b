import { totalmem } from 'node:os';
import type { ControlStore } from '../stores/control/store.js';
import { REQUEST_COLUMNS, requestValues, type RequestRecord } from '../stores/telemetry/request-record.js';
import { RollupWriter } from '../stores/telemetry/rollup-writer.js';
import { SearchWriter } from '../stores/telemetry/search-writer.js';
import { openTelemetry } from '../stores/telemetry/store.js';

const INSERT = `INSERT INTO requests (${REQUEST_COLUMNS.join(', ')})
  VALUES (${REQUEST_COLUMNS.map(() => '?').join(', ')})`;

const MAX_IMPORT_CACHE_KIB = 2 * 1024 * 1024;

function importCacheKib(): number {
  return Math.max(65_536, Math.min(MAX_IMPORT_CACHE_KIB, Math.floor(totalmem() / 8 / 1024)));
}

/** What a long import tells its operator while it runs. */
export type ImportEvent =
  /** A migration is about to run on the existing store (minutes on a large one). */
  | { kind: 'upgrading'; migration: string }
  /** Rows written so far, each time another `ImportProgress.every` are, and the milliseconds they took. */
  | { kind: 'written'; rows: number; ms: number }
  /** Every row is written; the rollups, the search index's last blocks and the commit remain. */
  | { kind: 'committing'; rows: number };

export interface ImportProgress {
  report: (event: ImportEvent) => void;
  /** Rows between two `written` events; 100,000 by default (a few seconds of import). */
  every?: number;
}

/**
 * Writes request-log rows, then settles their cost into each key's spend. The rows commit
 * in one telemetry transaction: if `records` throws part-way (a bad line), nothing is
 * written and nothing settled. The spend then settles in one short control transaction,
 * so a long import never holds the control store's write lock while a server runs on it.
 * A crash between the two commits would leave rows unsettled: the one window left, and
 * the reason spend is not recomputed from the rows elsewhere.
 * `alreadyRecorded` lets the caller refuse a request id seen before, in the store or
 * earlier in the same batch.
 */
export function recordRequests(
  control: ControlStore,
  telemetryPath: string,
  records: (alreadyRecorded: (reqId: string) => boolean) => Iterable<RequestRecord>,
  progress?: ImportProgress,
): number {
  const report = progress?.report;
  const every = progress?.every ?? 100_000;
  const telemetry = openTelemetry(telemetryPath, {
    upgrading: report && ((migration) => report({ kind: 'upgrading', migration })),
  });
  try {
    // A long import touches index pages all over the file (request ids and costs are random
    // keys: at ten million rows those two indexes are ~1 GB): keep them in memory, on this
    // connection only, within an eighth of the machine's memory.
    telemetry.pragma(`cache_size = -${importCacheKib()}`);
    const insert = telemetry.prepare(INSERT);
    const seen = telemetry.prepare<[string], { one: number }>('SELECT 1 AS one FROM requests WHERE req_id = ?');
    const alreadyRecorded = (reqId: string) => seen.get(reqId) !== undefined;
    const rollups = new RollupWriter(telemetry);
    const search = new SearchWriter(telemetry);
    const spend = new Map<string, number>();
    const count = telemetry
      .transaction(() => {
        let written = 0;
        const started = performance.now();
        for (const record of records(alreadyRecorded)) {
          search.add(Number(insert.run(requestValues(record)).lastInsertRowid), record);
          rollups.add(record);
          if (record.key_id) spend.set(record.key_id, (spend.get(record.key_id) ?? 0) + record.cost_micro);
          written++;
          if (report && written % every === 0) {
            report({ kind: 'written', rows: written, ms: performance.now() - started });
          }
        }
        report?.({ kind: 'committing', rows: written });
        rollups.flush();
        search.flush();
        return written;
      })
      .immediate();
    control.write(() => {
      for (const [keyId, cost] of spend) control.keys.settle(keyId, cost);
    });
    return count;
  } finally {
    telemetry.close();
  }
}
