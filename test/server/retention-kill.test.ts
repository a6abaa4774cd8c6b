import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { recordRequests } from '../../server/ingest/record-requests.js';
import { SqliteControlStore } from '../../server/stores/control/store.js';
import { expireRows } from '../../server/stores/telemetry/expire-rows.js';
import { REQUEST_COLUMNS } from '../../server/stores/telemetry/request-record.js';
import { openTelemetry } from '../../server/stores/telemetry/store.js';
import { HORIZON, MAIN, MINUTE, NOW, OTHER, retentionRows, rollupDigests, START } from './retention-rows.js';

/**
 * A process deleting old rows (expire-rows.ts, in batches of 2,000) killed outright part-way
 * through: the store opens whole, the deletions that committed are whole batches, nothing from the
 * horizon on and none of the rollups changed, and a new deletion loop finishes the job.
 */

// Writing 60,000 rows takes ~5 s here, deleting them as long.
vi.setConfig({ testTimeout: 90_000, hookTimeout: 90_000 });

const root = resolve(import.meta.dirname, '../..');
const scratch = mkdtempSync(join(tmpdir(), 'gc-retention-kill-'));
const path = join(scratch, 'telemetry.db');
const BATCH = 2_000;

// Old rows with few metadata strings (a shared customer), so that they are quick to write.
const OLD = retentionRows(60_000, { seed: 71, prefix: 'old-', from: START, to: HORIZON }).map((row, i) => ({
  ...row,
  metadata: i % 50 === 0 ? row.metadata : JSON.stringify({ customer: `c${i % 7}` }),
}));
const NEWER = retentionRows(3_000, { seed: 72, prefix: 'newer-', from: HORIZON, to: NOW });
const OTHERS = retentionRows(2_000, { seed: 73, prefix: 'other-', from: START, to: NOW }).map((row) => ({
  ...row,
  org_id: OTHER,
}));
/** Written last: the largest rowid is a recent row's, so every old row can go. */
const NEWEST = retentionRows(1, { seed: 74, prefix: 'newest-', from: NOW - MINUTE, to: NOW })[0]!;

beforeAll(async () => {
  const control = SqliteControlStore.open(join(scratch, 'control.db'), { accessSeconds: 900, refreshSeconds: 3600 });
  try {
    await recordRequests(control, path, [...OLD, ...NEWER, ...OTHERS]);
    await recordRequests(control, path, [NEWEST]);
  } finally {
    await control.close();
  }
});
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const rowsOf = (db: BetterSqlite3.Database, where: string, ...params: unknown[]) =>
  db.prepare(`SELECT ${REQUEST_COLUMNS.join(', ')} FROM requests WHERE ${where} ORDER BY req_id`).all(...params);
const count = (db: BetterSqlite3.Database, where: string, ...params: unknown[]) =>
  db
    .prepare(`SELECT COUNT(*) FROM requests WHERE ${where}`)
    .pluck()
    .get(...params) as number;

describe('a deletion killed part-way', () => {
  it('leaves a whole store, whole batches deleted, and the rest for the next deletion', async () => {
    const before = new BetterSqlite3(path, { readonly: true });
    const rollups = rollupDigests(before);
    const kept = rowsOf(before, 'ts >= ?', HORIZON);
    const others = rowsOf(before, 'org_id = ?', OTHER);
    const old = count(before, 'org_id = ? AND ts < ?', MAIN, HORIZON);
    expect(old).toBe(OLD.length);

    // Node itself with tsx's loader (not the tsx command, whose own process a SIGKILL would end).
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', 'test/server/fixtures/expire-loop.ts', path, MAIN, String(HORIZON), String(BATCH)],
      { cwd: root, stdio: 'pipe' },
    );
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<NodeJS.Signals | null>((done) => child.once('exit', (_, signal) => done(signal)));
    // Killed once a third of the rows have gone, most likely inside a batch's transaction.
    let left = old;
    for (let waited = 0; left > old - 20_000; waited += 10) {
      if (child.exitCode !== null || waited > 60_000) throw new Error(`the deletion ended or stalled: ${output}`);
      await new Promise((done) => setTimeout(done, 10));
      left = count(before, 'org_id = ? AND ts < ?', MAIN, HORIZON);
    }
    child.kill('SIGKILL');
    expect(await exited).toBe('SIGKILL');
    expect(output).not.toContain('done');
    before.close();

    // Opened again (the log of the killed writer recovered): whole, and only whole batches gone.
    const db = openTelemetry(path);
    try {
      expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
      const remaining = count(db, 'org_id = ? AND ts < ?', MAIN, HORIZON);
      expect(remaining).toBeGreaterThan(0);
      expect(remaining).toBeLessThanOrEqual(old - 20_000);
      expect((old - remaining) % BATCH).toBe(0);
      expect(rowsOf(db, 'ts >= ?', HORIZON)).toEqual(kept);
      expect(rowsOf(db, 'org_id = ?', OTHER)).toEqual(others);
      expect(rollupDigests(db)).toEqual(rollups);

      // The next loop (the next sweep) deletes the rest.
      let deleted = 0;
      for (;;) {
        const rows = expireRows(db, MAIN, HORIZON, BATCH);
        deleted += rows;
        if (rows < BATCH) break;
      }
      expect(deleted).toBe(remaining);
      expect(count(db, 'org_id = ? AND ts < ?', MAIN, HORIZON)).toBe(0);
      expect(rowsOf(db, 'ts >= ?', HORIZON)).toEqual(kept);
      expect(rollupDigests(db)).toEqual(rollups);
      expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
    } finally {
      db.close();
    }
  });
});
