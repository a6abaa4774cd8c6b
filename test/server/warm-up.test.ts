import BetterSqlite3 from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { AnalyticsPool } from '../../server/analytics/pool.js';
import { AnalyticsQueries } from '../../server/analytics/queries.js';
import { SqliteSql } from '../../server/analytics/sqlite-sql.js';
import { warmUp, warmUpQueries } from '../../server/analytics/warm-up.js';
import { SqliteControlStore } from '../../server/stores/control/store.js';
import { REQUEST_COLUMNS } from '../../server/stores/telemetry/request-record.js';
import { openTelemetry } from '../../server/stores/telemetry/store.js';

const scratch = mkdtempSync(join(tmpdir(), 'gc-warm-up-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
const pools: AnalyticsPool[] = [];
afterEach(async () => {
  await Promise.all(pools.splice(0).map((pool) => pool.close()));
});

const ORG = 'org-1';
const NOW = Date.now();

/** A telemetry store with a request a second over the last two hours (rows only: no rollups, so windows of seconds are read). */
function storeWithRows(): string {
  const path = join(mkdtempSync(join(scratch, 'telemetry-')), 'telemetry.db');
  const db = openTelemetry(path);
  db.exec(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n LIMIT 7200)
    INSERT INTO requests (${REQUEST_COLUMNS.join(', ')}) SELECT 'req-' || i, ${NOW} - i * 1000, '${ORG}', NULL, NULL, 'svc/auto', 200, 0,
      100, NULL, NULL, 5, 10, 20, NULL, NULL, 30, 0, 1000, 0, 'success', NULL, 'svc-model', NULL, NULL, NULL, 'test', '{}'
    FROM n`);
  db.close();
  return path;
}

describe('the analytics threads warm-up', () => {
  it("runs every query of a screen's first read against the real query code", async () => {
    const db = new BetterSqlite3(storeWithRows(), { readonly: true });
    try {
      const queries = new AnalyticsQueries(new SqliteSql(db));
      // Run as the worker runs it, where an error would be swallowed: a query shape the query
      // code no longer takes must fail here instead.
      await expect(warmUp(() => queries, [ORG, 'org-without-rows'], NOW)).resolves.toBeUndefined();
      expect(warmUpQueries(ORG, NOW).map((query) => query.kind)).toContain('dashboard');
      // Over the window the console's Analytics screen opens on, as its first sign-in asks.
      expect(warmUpQueries(ORG, NOW)).toContainEqual({
        kind: 'summary',
        scope: { orgId: ORG, from: NOW - 24 * 3_600_000, to: NOW },
      });
      expect(warmUpQueries(ORG, NOW).map((query) => query.kind)).toContain('burn');
      // Within its budget it runs every query of every organisation; past it, no more.
      let runs = 0;
      const counting = { run: (query: Parameters<AnalyticsQueries['run']>[0]) => (runs++, queries.run(query)) };
      await warmUp(() => counting as AnalyticsQueries, [ORG, ORG], NOW, 60_000);
      expect(runs).toBe(2 * warmUpQueries(ORG, NOW).length);
      runs = 0;
      await warmUp(() => counting as AnalyticsQueries, [ORG, ORG], NOW, -1);
      expect(runs).toBe(0);
      expect(await queries.run({ kind: 'summary', scope: { orgId: ORG, from: NOW - 10_000, to: NOW } })).toMatchObject({
        requests: 10,
      });
    } finally {
      db.close();
    }
  });

  it('leaves a warmed pool answering exactly, and one whose store is not there yet answering once it is', async () => {
    const warmed = new AnalyticsPool(storeWithRows(), { size: 2, timeoutMs: 30_000, maxQueued: 8 });
    pools.push(warmed);
    warmed.warm([ORG, 'org-without-rows']);
    const scope = { orgId: ORG, from: NOW - 10_000, to: NOW };
    await expect(warmed.run({ kind: 'summary', scope })).resolves.toMatchObject({ requests: 10 });

    const later = join(mkdtempSync(join(scratch, 'later-')), 'telemetry.db');
    const early = new AnalyticsPool(later, { size: 1, timeoutMs: 30_000, maxQueued: 8 });
    pools.push(early);
    early.warm([ORG]);
    await expect(early.run({ kind: 'summary', scope })).rejects.toThrow();
    openTelemetry(later).close();
    await expect(early.run({ kind: 'summary', scope })).resolves.toMatchObject({ requests: 0 });
  });
});

describe('the organisations a server warms up for', () => {
  it('are those whose members signed in last, then the newest', async () => {
    const store = SqliteControlStore.open(join(mkdtempSync(join(scratch, 'control-')), 'control.db'), {
      accessSeconds: 900,
      refreshSeconds: 604_800,
    });
    try {
      const orgs = store.organizations;
      const [old, middle, newest] = await store.write(async (tx) => {
        const ids: string[] = [];
        for (const at of [1, 2, 3]) ids.push((await tx.organizations.create(`Organisation ${at}`, at)).id);
        return ids;
      });
      expect(await orgs.likelyNext(2)).toEqual([newest, middle]);
      const signIn = (orgId: string, email: string, at: number) =>
        store.write(async (tx) => {
          const { id } = await tx.accounts.create(orgId, email, null, 'owner', 1);
          await tx.sessions.start(id, at);
          return id;
        });
      await signIn(old!, 'old@example.com', 100);
      await signIn(middle!, 'middle@example.com', 50);
      expect(await orgs.likelyNext(3)).toEqual([old, middle, newest]);
      expect(await orgs.likelyNext(1)).toEqual([old]);
      // A member who has left signs in no more: their organisation is as likely as any other.
      const gone = await signIn(newest!, 'gone@example.com', 200);
      expect(await orgs.likelyNext(1)).toEqual([newest]);
      await store.write((tx) => tx.accounts.setDeactivated(gone, 300));
      expect(await orgs.likelyNext(3)).toEqual([old, middle, newest]);
    } finally {
      await store.close();
    }
  });
});
