import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Database } from 'better-sqlite3';
import pino from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { retentionHorizon } from '../../server/domain/retention.js';
import { recordRequests } from '../../server/ingest/record-requests.js';
import { RetentionSweeper, SWEEP_BATCH_ROWS, type RetentionSweeperOptions } from '../../server/retention/sweeper.js';
import { SqliteControlStore } from '../../server/stores/control/store.js';
import { expireRows } from '../../server/stores/telemetry/expire-rows.js';
import type { RequestRecord } from '../../server/stores/telemetry/request-record.js';
import { openTelemetry } from '../../server/stores/telemetry/store.js';
import { DAY, MINUTE, NOW, rollupDigests, retentionRows, START } from './retention-rows.js';

/**
 * The retention sweeper (server/retention/sweeper.ts) over a real SQLite store: which
 * organisations it sweeps and to which horizon, its batches, a failed sweep logged and the
 * next one completing, and `close()` stopping after the deletion under way.
 */

vi.setConfig({ testTimeout: 30_000, hookTimeout: 60_000 });

const scratch = mkdtempSync(join(tmpdir(), 'gc-retention-sweeper-'));
const seeded = join(scratch, 'seeded.db');
const ORGS = ['org-a', 'org-b', 'org-c'];
/** Each organisation's rows over the four days before NOW. */
const ROWS: RequestRecord[] = ORGS.flatMap((orgId, n) =>
  retentionRows(1_500 + 200 * n, { seed: 40 + n, prefix: `${orgId}-`, from: START, to: NOW }).map((row) => ({
    ...row,
    org_id: orgId,
  })),
);
/** Written last, so that the largest rowid is a recent row's and every old row can go. */
const NEWEST = {
  ...retentionRows(1, { seed: 49, prefix: 'newest-', from: NOW - MINUTE, to: NOW })[0]!,
  org_id: 'org-c',
};

beforeAll(async () => {
  const control = SqliteControlStore.open(join(scratch, 'control.db'), { accessSeconds: 900, refreshSeconds: 3600 });
  try {
    await recordRequests(control, seeded, ROWS);
    await recordRequests(control, seeded, [NEWEST]);
  } finally {
    await control.close();
  }
  // One file to copy: the log checkpointed into it.
  const db = openTelemetry(seeded);
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();
});
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

let open: Database[] = [];
afterEach(() => {
  for (const db of open) db.close();
  open = [];
});

let copies = 0;
/** A store of its own for one case: the seeded rows. */
function store(): Database {
  const path = join(scratch, `copy-${++copies}.db`);
  copyFileSync(seeded, path);
  const db = openTelemetry(path);
  open.push(db);
  return db;
}

/** A logger whose lines are kept, as pino writes them. */
function collectingLog() {
  const lines: {
    level: number;
    msg: string;
    orgId?: string;
    rows?: number;
    before?: string;
    err?: { message: string };
  }[] = [];
  const log = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
  return { log, lines };
}

const INFO = 30;
const WARN = 40;

/** The calls a sweeper made to `expire`, with what each deleted. */
interface Call {
  orgId: string;
  before: number;
  limit: number;
  rows: number;
}

function sweeperOver(
  db: Database,
  options: Partial<RetentionSweeperOptions> & Pick<RetentionSweeperOptions, 'platformDays'>,
  own: { orgId: string; days: number }[] = [],
) {
  const calls: Call[] = [];
  const organizations = vi.fn(async () => ORGS);
  const { log, lines } = collectingLog();
  const sweeper = new RetentionSweeper({
    retentions: async () => own,
    organizations,
    expire: async (orgId, before, limit) => {
      const rows = expireRows(db, orgId, before, limit);
      calls.push({ orgId, before, limit, rows });
      return { rows, terms: 0, ms: 0, more: rows === limit };
    },
    now: () => NOW,
    log,
    pauseMs: 0,
    ...options,
  });
  return { sweeper, calls, lines, organizations };
}

/** Rows of an organisation: older than `before`, and from it on. */
function counts(db: Database, orgId: string, before: number): { old: number; kept: number } {
  const count = (where: string) =>
    db.prepare(`SELECT COUNT(*) FROM requests WHERE org_id = ? AND ${where}`).pluck().get(orgId, before) as number;
  return { old: count('ts < ?'), kept: count('ts >= ?') };
}

/** What the seeded rows hold for an organisation at a horizon. */
function seededCounts(orgId: string, before: number): { old: number; kept: number } {
  const rows = [...ROWS, NEWEST].filter((row) => row.org_id === orgId);
  return { old: rows.filter((row) => row.ts < before).length, kept: rows.filter((row) => row.ts >= before).length };
}

const horizon = (days: number) => retentionHorizon(days, NOW)!;

describe('the retention sweeper', () => {
  it('sweeps every organisation to the platform’s horizon, in batches, and says how many rows went', async () => {
    const db = store();
    const rollups = rollupDigests(db);
    const { sweeper, calls, lines } = sweeperOver(db, { platformDays: 2 });
    await sweeper.sweep();
    for (const orgId of ORGS) {
      const seeded = seededCounts(orgId, horizon(2));
      expect(seeded.old).toBeGreaterThan(SWEEP_BATCH_ROWS);
      expect(counts(db, orgId, horizon(2))).toEqual({ old: 0, kept: seeded.kept });
      // Every call with the horizon and the default batch; the last one short.
      const own = calls.filter((call) => call.orgId === orgId);
      expect(own.every((call) => call.before === horizon(2) && call.limit === SWEEP_BATCH_ROWS)).toBe(true);
      expect(own.slice(0, -1).every((call) => call.rows === SWEEP_BATCH_ROWS)).toBe(true);
      expect(own.at(-1)!.rows).toBeLessThan(SWEEP_BATCH_ROWS);
      expect(lines).toContainEqual(
        expect.objectContaining({
          level: INFO,
          orgId,
          rows: seeded.old,
          before: '2026-11-04T09:00:00.000Z',
          msg: 'retention: old request rows deleted',
        }),
      );
    }
    expect(rollupDigests(db)).toEqual(rollups);
    // A sweep with nothing left to delete asks once per organisation and says nothing.
    const said = lines.length;
    const asked = calls.length;
    await sweeper.sweep();
    expect(calls.slice(asked).map((call) => [call.orgId, call.rows])).toEqual(ORGS.map((orgId) => [orgId, 0]));
    expect(lines).toHaveLength(said);
  });

  it('takes an organisation’s own retention when it is shorter than the platform’s', async () => {
    const db = store();
    const { sweeper, calls } = sweeperOver(db, { platformDays: 3 }, [
      { orgId: 'org-a', days: 1 },
      // Longer than the platform's: the platform's holds.
      { orgId: 'org-b', days: 10 },
    ]);
    await sweeper.sweep();
    const expected = { 'org-a': horizon(1), 'org-b': horizon(3), 'org-c': horizon(3) };
    for (const [orgId, before] of Object.entries(expected)) {
      expect(new Set(calls.filter((call) => call.orgId === orgId).map((call) => call.before))).toEqual(
        new Set([before]),
      );
      expect(counts(db, orgId, before)).toEqual({ old: 0, kept: seededCounts(orgId, before).kept });
      expect(seededCounts(orgId, before).old).toBeGreaterThan(0);
    }
  });

  it('sweeps only the organisations with a retention of their own when the platform keeps every row', async () => {
    const db = store();
    const { sweeper, calls, organizations } = sweeperOver(db, { platformDays: null }, [{ orgId: 'org-b', days: 1 }]);
    await sweeper.sweep();
    expect(organizations).not.toHaveBeenCalled();
    expect(new Set(calls.map((call) => call.orgId))).toEqual(new Set(['org-b']));
    expect(counts(db, 'org-b', horizon(1))).toEqual({ old: 0, kept: seededCounts('org-b', horizon(1)).kept });
    for (const orgId of ['org-a', 'org-c']) expect(counts(db, orgId, NOW)).toEqual(seededCounts(orgId, NOW));
  });

  it('deletes no more than its batch at a time, and stops at the first short batch', async () => {
    const db = store();
    const { sweeper, calls } = sweeperOver(db, { platformDays: 2, batchRows: 100 });
    await sweeper.sweep();
    for (const orgId of ORGS) {
      const own = calls.filter((call) => call.orgId === orgId);
      const old = seededCounts(orgId, horizon(2)).old;
      expect(own.every((call) => call.limit === 100)).toBe(true);
      expect(own.map((call) => call.rows)).toEqual([...Array<number>(Math.floor(old / 100)).fill(100), old % 100]);
      expect(counts(db, orgId, horizon(2)).old).toBe(0);
    }
  });

  it('logs an organisation whose deletion fails, goes on with the others, never throws, and completes at the next sweep', async () => {
    const db = store();
    let failures = 1;
    const { sweeper, calls, lines } = sweeperOver(db, {
      platformDays: 2,
      batchRows: 200,
      expire: async (orgId, before, limit) => {
        // The third deletion fails (a busy store, say), once.
        if (calls.length === 2 && failures-- > 0) throw new Error('database is locked');
        const rows = expireRows(db, orgId, before, limit);
        calls.push({ orgId, before, limit, rows });
        return { rows, terms: 0, ms: 0, more: rows === limit };
      },
    });
    await expect(sweeper.sweep()).resolves.toBeUndefined();
    expect(lines).toContainEqual(
      expect.objectContaining({
        level: WARN,
        orgId: 'org-a',
        msg: 'retention: could not delete old request rows; trying again at the next sweep',
        err: expect.objectContaining({ message: 'database is locked' }),
      }),
    );
    // The first organisation stopped there, after two batches; the others were swept whole.
    expect(calls.filter((call) => call.orgId === 'org-a').map((call) => call.rows)).toEqual([200, 200]);
    expect(counts(db, 'org-a', horizon(2)).old).toBe(seededCounts('org-a', horizon(2)).old - 400);
    for (const orgId of ['org-b', 'org-c']) {
      expect(counts(db, orgId, horizon(2))).toEqual({ old: 0, kept: seededCounts(orgId, horizon(2)).kept });
    }

    await sweeper.sweep();
    for (const orgId of ORGS) {
      expect(counts(db, orgId, horizon(2))).toEqual({ old: 0, kept: seededCounts(orgId, horizon(2)).kept });
    }
    // A sweep that cannot even list the retentions is logged the same way.
    const { sweeper: blind, lines: blindLines } = sweeperOver(db, {
      platformDays: 2,
      retentions: () => Promise.reject(new Error('control store unreachable')),
    });
    await blind.sweep();
    expect(blindLines).toEqual([
      expect.objectContaining({ level: WARN, err: expect.objectContaining({ message: 'control store unreachable' }) }),
    ]);
  });

  it('runs one sweep at a time, and one more after it when asked meanwhile (a retention just shortened)', async () => {
    const db = store();
    let running = 0;
    let most = 0;
    const { sweeper, calls } = sweeperOver(db, {
      platformDays: 2,
      batchRows: 300,
      expire: async (orgId, before, limit) => {
        running++;
        most = Math.max(most, running);
        await new Promise((resolve) => setTimeout(resolve, 1));
        const rows = expireRows(db, orgId, before, limit);
        calls.push({ orgId, before, limit, rows });
        running--;
        return { rows, terms: 0, ms: 0, more: rows === limit };
      },
    });
    const first = sweeper.sweep();
    expect(sweeper.sweep()).toBe(first);
    await first;
    expect(most).toBe(1);
    // The first pass deletes every old row; the pass asked for during it finds each organisation's none left.
    const onePass = ORGS.reduce((sum, orgId) => sum + Math.floor(seededCounts(orgId, horizon(2)).old / 300) + 1, 0);
    expect(calls.length).toBe(onePass + ORGS.length);
    expect(calls.slice(onePass).map((call) => call.rows)).toEqual(ORGS.map(() => 0));
  });

  it('goes on while the store says more is left (search terms after the rows), and counts the terms', async () => {
    const db = store();
    // The store's terms step lags the rows by three calls, as a sweep over terms interleaved
    // with other organisations' does (expire-terms.ts), deleting 40 terms each time.
    const lag = new Map<string, number>();
    const { sweeper, calls, lines } = sweeperOver(db, {
      platformDays: 2,
      expire: async (orgId, before, limit) => {
        const rows = expireRows(db, orgId, before, limit);
        calls.push({ orgId, before, limit, rows });
        const left = rows === limit ? 3 : (lag.get(orgId) ?? 3) - 1;
        lag.set(orgId, left);
        return { rows, terms: 40, ms: 0, more: rows === limit || left > 0 };
      },
    });
    await sweeper.sweep();
    for (const orgId of ORGS) {
      const own = calls.filter((call) => call.orgId === orgId);
      const old = seededCounts(orgId, horizon(2)).old;
      // Every row batch, then calls with no rows left until the terms are done.
      const batches = Math.floor(old / SWEEP_BATCH_ROWS) + 1;
      expect(own.map((call) => call.rows)).toEqual([
        ...Array<number>(batches - 1).fill(SWEEP_BATCH_ROWS),
        old % SWEEP_BATCH_ROWS,
        0,
        0,
      ]);
      expect(lines).toContainEqual(
        expect.objectContaining({ orgId, rows: old, terms: 40 * (batches + 2), batches: batches + 2 }),
      );
    }
  });

  it('stops after the deletion under way when closed', async () => {
    const db = store();
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    let third: () => void = () => undefined;
    const thirdStarted = new Promise<void>((resolve) => (third = resolve));
    const { sweeper, calls } = sweeperOver(db, {
      platformDays: 2,
      batchRows: 100,
      expire: async (orgId, before, limit) => {
        if (calls.length === 2) {
          third();
          await held;
        }
        const rows = expireRows(db, orgId, before, limit);
        calls.push({ orgId, before, limit, rows });
        return { rows, terms: 0, ms: 0, more: rows === limit };
      },
    });
    const sweep = sweeper.sweep();
    await thirdStarted;
    let closed = false;
    const closing = sweeper.close().then(() => (closed = true));
    await new Promise((resolve) => setTimeout(resolve, 50));
    // Waiting for the deletion under way.
    expect(closed).toBe(false);
    release();
    await closing;
    await sweep;
    expect(calls.map((call) => call.rows)).toEqual([100, 100, 100]);
    expect(counts(db, 'org-a', horizon(2)).old).toBe(seededCounts('org-a', horizon(2)).old - 300);
    // Closed: a sweep asked for deletes nothing any more.
    await sweeper.sweep();
    expect(calls).toHaveLength(3);
  });

  it('sweeps at start and then every interval until closed', async () => {
    const db = store();
    let now = NOW - 2 * DAY;
    const { sweeper, calls } = sweeperOver(db, { platformDays: 2, intervalMs: 30, now: () => now });
    sweeper.start();
    // The first sweep, at start: nothing is two days older than two days before NOW's rows.
    await vi.waitFor(() => expect(calls.length).toBeGreaterThanOrEqual(3));
    expect(calls.slice(0, 3).map((call) => call.rows)).toEqual([0, 0, 0]);
    // The clock moves on: a later sweep deletes to the new horizon.
    now = NOW;
    await vi.waitFor(() => {
      for (const orgId of ORGS) expect(counts(db, orgId, horizon(2)).old).toBe(0);
    });
    await sweeper.close();
    const made = calls.length;
    await new Promise((resolve) => setTimeout(resolve, 120));
    expect(calls).toHaveLength(made);
  });
});
