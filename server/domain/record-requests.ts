import type { ControlStore } from '../stores/control/store.js';
import { openSqlite } from '../stores/sqlite.js';
import { REQUEST_COLUMNS, type RequestRecord } from '../stores/telemetry/request-record.js';
import { TELEMETRY_MIGRATIONS } from '../stores/telemetry/store.js';

const INSERT = `INSERT INTO telemetry.requests (${REQUEST_COLUMNS.join(', ')})
  VALUES (${REQUEST_COLUMNS.map((c) => '@' + c).join(', ')})`;

/**
 * Writes request-log rows and settles their cost into each key's spend. The telemetry
 * file is attached to the control connection so that rows and spend commit in one
 * transaction: if `records` throws part-way (a bad line), nothing is written.
 * `alreadyRecorded` lets the caller refuse a request id seen before.
 */
export function recordRequests(
  control: ControlStore,
  telemetryPath: string,
  records: (alreadyRecorded: (reqId: string) => boolean) => Iterable<RequestRecord>,
): number {
  openSqlite(telemetryPath, TELEMETRY_MIGRATIONS).close();
  const db = control.db;
  db.prepare('ATTACH DATABASE ? AS telemetry').run(telemetryPath);
  try {
    const insert = db.prepare(INSERT);
    const seen = db.prepare<[string], { one: number }>('SELECT 1 AS one FROM telemetry.requests WHERE req_id = ?');
    const alreadyRecorded = (reqId: string) => seen.get(reqId) !== undefined;
    return control.write(() => {
      const spend = new Map<string, number>();
      let count = 0;
      for (const record of records(alreadyRecorded)) {
        insert.run(record);
        if (record.key_id) spend.set(record.key_id, (spend.get(record.key_id) ?? 0) + record.cost_micro);
        count++;
      }
      for (const [keyId, cost] of spend) control.keys.settle(keyId, cost);
      return count;
    });
  } finally {
    db.exec('DETACH DATABASE telemetry');
  }
}
