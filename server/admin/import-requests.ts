import { existsSync } from 'node:fs';
import { ndjsonSource, ownersOf } from '../ingest/ndjson-source.js';
import {
  ImportSourceError,
  recordRequestsFrom,
  RepeatedRequest,
  type ImportProgress,
} from '../ingest/record-requests.js';
import type { ControlStore } from '../stores/control/store.js';
import type { PgRequestLog } from '../stores/telemetry/postgres/request-log.js';

export type ImportResult = { ok: true; rows: number } | { ok: false; error: string };

/**
 * Loads an NDJSON file of request-log rows into the telemetry store and settles their
 * cost into each key's spend. A malformed line, an unknown key or project, or a request
 * id seen before rejects the whole file, naming the line; nothing is half-imported.
 */
export async function importRequests(
  control: ControlStore,
  telemetry: string | PgRequestLog,
  file: string,
  progress?: ImportProgress,
): Promise<ImportResult> {
  if (!existsSync(file)) return { ok: false, error: `no such file: ${file}` };
  try {
    const source = ndjsonSource(file, await ownersOf(control));
    const rows = await recordRequestsFrom(control, telemetry, source, progress);
    return { ok: true, rows };
  } catch (error) {
    if (error instanceof ImportSourceError && error.code === 'LINE') return { ok: false, error: error.message };
    if (error instanceof ImportSourceError && error.code === 'ENOENT')
      return { ok: false, error: `no such file: ${file}` };
    if (error instanceof RepeatedRequest) {
      return { ok: false, error: `line ${error.line ?? '?'}: ${error.message}` };
    }
    throw error;
  }
}
