import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { readRows, type Owners } from '../../server/ingest/ndjson-records.js';
import { ndjsonSource } from '../../server/ingest/ndjson-source.js';
import { recordRequests, recordRequestsFrom } from '../../server/ingest/record-requests.js';
import { ImportedRequest } from '../../server/schemas/request-log.js';
import { SqliteControlStore } from '../../server/stores/control/store.js';
import {
  EPOCH_ROWS,
  ROW_SIGNATURES,
  StoredEpoch,
  TERM_SIGNATURES,
} from '../../server/stores/telemetry/search-terms.js';
import { registerTelemetryFunctions } from '../../server/stores/telemetry/sql-functions.js';
import { importRow, ndjsonFile, signatures, signedFromStore } from './request-rows.js';

const scratch = mkdtempSync(join(tmpdir(), 'gc-import-epochs-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const ORG = '0b9f3a52-54c1-4c3e-9a57-9d51c0a6e001';
const PROJECT = '0b9f3a52-54c1-4c3e-9a57-9d51c0a6e002';
const KEYS = ['0b9f3a52-54c1-4c3e-9a57-9d51c0a6e003', '0b9f3a52-54c1-4c3e-9a57-9d51c0a6e004'];
const START = Date.parse('2026-11-01T00:00:00Z');

const owners: Owners = {
  keys: new Map(KEYS.map((key) => [key, { orgId: ORG, projectId: PROJECT }])),
  projects: new Map([[PROJECT, ORG]]),
  organizations: new Map(),
};

/** Rows from number `from` on, each with a customer of its own (a term) and a trace id (a row's own text). */
function rows(count: number, from = 0): object[] {
  return Array.from({ length: count }, (_, at) => {
    const i = from + at;
    return importRow(KEYS[i % 2]!, PROJECT, {
      req_id: `req-epochs-${i}`,
      timestamp: new Date(START + i * 13_000).toISOString(),
      metadata: { customer: `customer-${i}`, trace_id: (0x5eed_0000_0000 + i * 7919).toString(16).padStart(32, '0') },
    });
  });
}

describe('an NDJSON import into a store that ends inside an epoch of its search index', () => {
  it('signs the epochs its first terms and rows fill bit for bit as the store gives them', async () => {
    const control = SqliteControlStore.open(join(scratch, 'control.db'), { accessSeconds: 60, refreshSeconds: 600 });
    try {
      // The store ends inside the first epoch of terms and of rows: the import fills both, whose
      // earlier ids the writer reads while the reading thread starts, and the rest when it signs.
      const path = join(scratch, 'mid-epoch.db');
      const before = ndjsonFile(scratch, rows(EPOCH_ROWS - 1_000));
      await recordRequests(control, path, readRows({ files: [before], owners, schema: ImportedRequest }).records);
      const file = ndjsonFile(scratch, rows(2_000, EPOCH_ROWS - 1_000));
      expect(await recordRequestsFrom(control, path, ndjsonSource([file], owners))).toBe(2_000);

      const db = new BetterSqlite3(path);
      registerTelemetryFunctions(db);
      try {
        for (const kind of [TERM_SIGNATURES, ROW_SIGNATURES]) {
          const written = signatures(db, kind);
          expect(written.length).toBeGreaterThan(0);
          expect(signedFromStore(db, kind)).toEqual(written);
        }

        // What the writer had not read ahead when the first rows came it reads when it signs the
        // epoch: read a few at a time, the bits are those read at once.
        for (const kind of [TERM_SIGNATURES, ROW_SIGNATURES]) {
          const atOnce = new StoredEpoch(db, kind);
          expect(atOnce.readSome()).toBe(false);
          expect(atOnce.bits.some((byte) => byte !== 0)).toBe(true);
          const inParts = new StoredEpoch(db, kind);
          let parts = 0;
          while (inParts.readSome(100)) parts++;
          expect(parts).toBeGreaterThan(2);
          expect(inParts.bits).toEqual(atOnce.bits);
        }
      } finally {
        db.close();
      }
    } finally {
      await control.close();
    }
    // Some 66,000 rows written: ~10 s alone, twice that beside the suite's other files.
  }, 60_000);
});
