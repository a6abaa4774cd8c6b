import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { getPriority, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { ANALYTICS_NICE, AnalyticsPool, AnalyticsUnavailable } from '../../server/analytics/pool.js';
import type { AnalyticsQuery } from '../../server/analytics/query-types.js';
import { REQUEST_COLUMNS } from '../../server/stores/telemetry/request-record.js';
import { openTelemetry } from '../../server/stores/telemetry/store.js';

// Writing the rows took 4.6 s alone.
vi.setConfig({ hookTimeout: 60_000 });

const ORG = 'org-1';
const NOW = Date.UTC(2026, 10, 22);
const ROWS = 600_000;

let folder: string;
let path: string;
const pools: AnalyticsPool[] = [];

beforeAll(() => {
  folder = mkdtempSync(join(tmpdir(), 'gc-pool-'));
  path = join(folder, 'telemetry.db');
  const db = openTelemetry(path);
  // Enough rows, a second apart, that a chart of them by the second (a point per row, from
  // the rows: no rollup is that fine) takes well over the deadlines below.
  db.exec(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n LIMIT ${ROWS})
    INSERT INTO requests (${REQUEST_COLUMNS.join(', ')}) SELECT 'req-' || i, ${NOW} - i * 1000, '${ORG}', NULL, NULL, 'svc/auto', 200, 0,
      100, NULL, NULL, 5, 10, 20, NULL, NULL, 30, 0, 1000, 0, 'success', NULL, 'svc-model', NULL, NULL, NULL, 'test',
      json_object('customer', 'customer-' || (i % 97), 'trace_id', 'trace-' || i)
    FROM n`);
  db.close();
});
afterAll(() => rmSync(folder, { recursive: true, force: true }));
afterEach(async () => {
  await Promise.all(pools.splice(0).map((pool) => pool.close()));
});

function pool(limits: { size: number; timeoutMs: number; maxQueued: number }): AnalyticsPool {
  const created = new AnalyticsPool(path, limits);
  pools.push(created);
  return created;
}

const heavySeries: AnalyticsQuery = {
  kind: 'timeseries',
  scope: { orgId: ORG, from: 0, to: NOW },
  metric: 'latency',
  intervalMs: 1000,
  groupBy: null,
};
const quickSummary: AnalyticsQuery = { kind: 'summary', scope: { orgId: ORG, from: NOW - 10_000, to: NOW } };

describe('the analytics pool', () => {
  it('answers a query from a worker thread', async () => {
    const summary = await pool({ size: 1, timeoutMs: 30_000, maxQueued: 4 }).run(quickSummary);
    expect(summary.requests).toBe(10);
  });

  it.runIf(process.platform === 'linux')(
    'runs its workers below the priority of the thread that serves requests',
    async () => {
      const serving = getPriority();
      const analytics = pool({ size: 2, timeoutMs: 30_000, maxQueued: 4 });
      await Promise.all([analytics.run(quickSummary), analytics.run(quickSummary)]);
      const nice = (task: string) =>
        Number(readFileSync(`/proc/self/task/${task}/stat`, 'utf8').split(') ')[1]!.split(' ')[16]);
      // Both were started for the two jobs; the second may still be loading when they end.
      const below = Math.min(19, serving + ANALYTICS_NICE);
      await vi.waitFor(
        () => expect(readdirSync('/proc/self/task').filter((task) => nice(task) === below)).toHaveLength(2),
        { timeout: 10_000 },
      );
      expect(nice(String(process.pid))).toBe(serving);
      expect(getPriority()).toBe(serving);
    },
  );

  it.runIf(process.platform === 'linux')('starts its workers before the first query when warmed', async () => {
    const serving = getPriority();
    const below = Math.min(19, serving + ANALYTICS_NICE);
    const nice = (task: string) =>
      Number(readFileSync(`/proc/self/task/${task}/stat`, 'utf8').split(') ')[1]!.split(' ')[16]);
    const lowered = () => readdirSync('/proc/self/task').filter((task) => nice(task) === below).length;
    const before = lowered();
    pool({ size: 2, timeoutMs: 30_000, maxQueued: 4 }).warm();
    await vi.waitFor(() => expect(lowered() - before).toBe(2), { timeout: 10_000 });
  });

  it('gives up on a query past its deadline and serves the next one from a fresh worker', async () => {
    // The chart of every row took 1 to 2 s here; a fresh worker's summary a few ms, but its thread
    // runs below the others' priority and waited past 150 ms once in the full suite.
    const analytics = pool({ size: 1, timeoutMs: 400, maxQueued: 4 });
    await expect(analytics.run(heavySeries)).rejects.toThrow(AnalyticsUnavailable);
    await expect(analytics.run(heavySeries)).rejects.toThrow(/time limit/);
    expect((await analytics.run(quickSummary)).requests).toBe(10);
  });

  it('refuses at once when too many queries are waiting', async () => {
    const analytics = pool({ size: 1, timeoutMs: 30_000, maxQueued: 1 });
    await analytics.run(quickSummary); // the worker is up: the next job runs at once instead of queueing
    const running = analytics.run(heavySeries);
    const waiting = analytics.run(quickSummary);
    await expect(analytics.run(quickSummary)).rejects.toThrow(/too many analytics queries/);
    expect((await running).points).toBe(ROWS);
    expect((await waiting).requests).toBe(10);
  });

  it('drops a waiting query whose caller went away, and keeps serving', async () => {
    const analytics = pool({ size: 1, timeoutMs: 30_000, maxQueued: 4 });
    await analytics.run(quickSummary);
    const running = analytics.run(heavySeries);
    const caller = new AbortController();
    const dropped = analytics.run(quickSummary, caller.signal);
    caller.abort();
    await expect(dropped).rejects.toThrow(/caller went away/);
    expect((await running).points).toBe(ROWS);
    expect((await analytics.run(quickSummary)).requests).toBe(10);
  });
});
