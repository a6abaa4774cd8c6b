import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { LiveTelemetry } from '../../server/admission/live-telemetry.js';
import { MemoryQuota } from '../../server/admission/memory-quota.js';
import { recordRequests } from '../../server/ingest/record-requests.js';
import { SqliteControlStore } from '../../server/stores/control/store.js';
import { REQUEST_COLUMNS, type RequestRecord } from '../../server/stores/telemetry/request-record.js';
import { HORIZON, HOUR, MAIN, MINUTE, NOW, OTHER, retentionRows, rollupDigests, START } from './retention-rows.js';

/**
 * Retention's deletions on the thread that writes the gateways' rows (LiveTelemetry.expire,
 * telemetry-thread.ts), while rows keep coming: every row added is written, every row before
 * the horizon goes (but the one holding the largest rowid), no row from the horizon on is lost.
 */

vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

const scratch = mkdtempSync(join(tmpdir(), 'gc-retention-live-'));
const path = join(scratch, 'telemetry.db');
const controlPath = join(scratch, 'control.db');

/** Old rows of both organisations and newer ones; the last written is an old one of MAIN's. */
const OLD = retentionRows(16_000, { seed: 61, prefix: 'old-', from: START, to: HORIZON, mainShare: 0.9 });
const NEWER = retentionRows(2_000, { seed: 62, prefix: 'newer-', from: HORIZON, to: NOW - HOUR, mainShare: 0.8 });
const LAST_OLD = retentionRows(1, { seed: 63, prefix: 'last-old-', from: START, to: HORIZON })[0]!;
/** The gateways' rows, added while the old rows go. */
const LIVE = retentionRows(6_000, { seed: 64, prefix: 'live-', from: NOW - 50 * MINUTE, to: NOW, mainShare: 0.8 });

let control: SqliteControlStore;
let reader: BetterSqlite3.Database;

beforeAll(async () => {
  control = SqliteControlStore.open(controlPath, { accessSeconds: 900, refreshSeconds: 3600 });
  await recordRequests(control, path, [...OLD, ...NEWER]);
  await recordRequests(control, path, [LAST_OLD]);
  reader = new BetterSqlite3(path, { readonly: true });
});
afterAll(async () => {
  reader?.close();
  await control?.close();
  rmSync(scratch, { recursive: true, force: true });
});

const count = (where: string, ...params: unknown[]) =>
  reader
    .prepare(`SELECT COUNT(*) FROM requests WHERE ${where}`)
    .pluck()
    .get(...params) as number;
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('retention beside the gateways’ rows', () => {
  it('deletes the old rows between batches of new ones, losing none of them', async () => {
    const lines: { level: number; msg: string }[] = [];
    const log = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
    const live = new LiveTelemetry({
      controlLocation: { path: controlPath },
      telemetry: { path },
      quota: new MemoryQuota(),
      settled: () => undefined,
      log,
      flushMs: 5,
    });
    const rollups = rollupDigests(reader, HORIZON);
    const other = reader.prepare(`SELECT ${REQUEST_COLUMNS.join(', ')} FROM requests WHERE org_id = ? ORDER BY req_id`);
    const otherBefore = other.all(OTHER);
    const oldMain = OLD.filter((row) => row.org_id === MAIN).length + 1;
    expect(count('org_id = ? AND ts < ?', MAIN, HORIZON)).toBe(oldMain);
    try {
      // The writing thread started, with the first of the gateways' rows.
      for (const row of LIVE.slice(0, 75)) live.add(row);
      await live.written();
      // Retention's deletions, as the sweeper asks them, and what was written as each went.
      const deletions: { rows: number; terms: number; added: number; written: number }[] = [];
      let deleting = true;
      // The rest of the rows, a few at a time, paced by the deletions (however slow this machine
      // is today) so that the two go on together: the 8k-th chunk waits for the k-th deletion.
      let added = 75;
      const adding = (async () => {
        for (let at = 75, chunk = 0; at < LIVE.length; at += 30, chunk++) {
          while (deleting && deletions.length < Math.floor(chunk / 8)) await pause(2);
          for (const row of LIVE.slice(at, at + 30)) live.add(row);
          added = Math.min(LIVE.length, at + 30);
          await pause(5);
        }
      })();
      await pause(20);
      for (;;) {
        const { rows, terms, more } = await live.expire(MAIN, HORIZON, 500);
        deletions.push({ rows, terms, added, written: count("req_id LIKE 'live-%'") });
        if (!more) break;
      }
      deleting = false;
      await adding;
      await live.written();

      // No deletion took more than asked; they went while rows were still coming and being written.
      expect(deletions.every((d) => d.rows <= 500)).toBe(true);
      expect(deletions.length).toBeGreaterThan(20);
      const during = deletions.filter((d) => d.added < LIVE.length);
      expect(during.length).toBeGreaterThanOrEqual(20);
      expect(new Set(during.map((d) => d.written)).size).toBeGreaterThanOrEqual(10);

      // Every row added is written, as it was added.
      const written = reader
        .prepare(`SELECT ${REQUEST_COLUMNS.join(', ')} FROM requests WHERE req_id LIKE 'live-%' ORDER BY req_id`)
        .all() as RequestRecord[];
      expect(written).toEqual([...LIVE].sort((a, b) => (a.req_id < b.req_id ? -1 : 1)));
      // Every old row went, but the one that held the largest rowid while the store had no newer one.
      const left = reader.prepare('SELECT req_id FROM requests WHERE org_id = ? AND ts < ?').pluck().all(MAIN, HORIZON);
      expect(left.length <= 1 && left.every((id) => id === LAST_OLD.req_id)).toBe(true);
      expect(deletions.reduce((sum, d) => sum + d.rows, 0)).toBe(oldMain - left.length);
      // Their search terms went with them, on the same thread: every term of an old row of
      // MAIN's that no other row holds (the old rows were written before the newer ones).
      const firstNewer = reader.prepare("SELECT MIN(rowid) FROM requests WHERE req_id LIKE 'newer-%'").pluck().get();
      const orphans = reader.prepare(`SELECT COUNT(*) FROM search_terms t
        WHERE org_code = (SELECT code FROM request_strings WHERE text = ?) AND NOT shared AND row < ?
        AND NOT EXISTS (SELECT 1 FROM requests WHERE rowid = t.row)`);
      expect(orphans.pluck().get(MAIN, firstNewer)).toBe(0);
      expect(deletions.reduce((sum, d) => sum + d.terms, 0)).toBeGreaterThan(oldMain);
      // The largest rowid is a new row's now: one more deletion takes the last old one.
      expect((await live.expire(MAIN, HORIZON, 500)).rows).toBe(left.length);
      expect(count('org_id = ? AND ts < ?', MAIN, HORIZON)).toBe(0);
      // Nothing from the horizon on is lost; the other organisation and the old cells are untouched.
      for (const row of NEWER) expect(count('req_id = ?', row.req_id), row.req_id).toBe(1);
      expect(count('ts >= ?', HORIZON)).toBe(NEWER.length + LIVE.length);
      expect(other.all(OTHER).filter((row) => !(row as RequestRecord).req_id.startsWith('live-'))).toEqual(otherBefore);
      expect(rollupDigests(reader, HORIZON)).toEqual(rollups);
      expect(lines.filter((line) => line.level >= 40)).toEqual([]);

      // A deletion still queued when the writer closes is refused; the one under way finishes.
      const underWay = live.expire(OTHER, HORIZON, 100);
      const queued = live.expire(OTHER, HORIZON, 100);
      const closing = live.close();
      await expect(queued).rejects.toThrow('the request log is closing');
      await expect(underWay).resolves.toMatchObject({ rows: 100 });
      await closing;
    } finally {
      await live.close();
    }
  });
});
