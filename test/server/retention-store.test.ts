import BetterSqlite3 from 'better-sqlite3';
import { copyFileSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { verifyActivity } from '../../server/domain/activity-chain.js';
import { chainedRow, chainValues, type ActivityEvent } from '../../server/stores/control/activity.js';
import { registerActivityFunctions } from '../../server/stores/control/activity-hash.js';
import { seedRoutes as seedPgRoutes } from '../../server/stores/control/postgres/route-documents.js';
import { PgControlStore } from '../../server/stores/control/postgres/store.js';
import { seedRoutes } from '../../server/stores/control/route-documents.js';
import { SqliteControlStore, type ControlRecords } from '../../server/stores/control/store.js';
import { migratePostgres, openPool } from '../../server/stores/postgres.js';
import { openSqlite } from '../../server/stores/sqlite.js';
import { freshDatabase } from '../postgres/database.js';

/**
 * An organisation's own request-log retention in the control store (SQLite's migration 008,
 * PostgreSQL's 006), one body run on both backends: a store of the version before keeps every
 * row of every organisation, and its audit trail, which takes the new action and chains on.
 */

const LIFETIMES = { accessSeconds: 900, refreshSeconds: 3600 };

type Handle = ControlRecords & { close(): Promise<void> };

interface Backend {
  name: string;
  /**
   * A store of the version before retention, holding `seed`'s rows, then opened by this version;
   * with the activity table's indexes as they were before.
   */
  openOld(seed: string[]): Promise<{ store: Handle; indexesBefore: string[] }>;
  /** Runs a statement beside the repositories, as an operator editing the store would. */
  raw(sql: string): Promise<void>;
  /** The activity table's indexes, by name. */
  activityIndexes(): Promise<string[]>;
  cleanup(): Promise<void>;
}

/** The migrations of `folder` before `before`, alone in a folder of their own: a store of an older version. */
function migrationsBefore(folder: string, scratch: string, before: number): URL {
  const source = new URL(`../../server/stores/control/${folder}/`, import.meta.url);
  const target = mkdtempSync(join(scratch, 'migrations-'));
  for (const name of readdirSync(source)) {
    if (/^\d{3}_/.test(name) && Number(name.slice(0, 3)) < before) {
      copyFileSync(new URL(name, source), join(target, name));
    }
  }
  return pathToFileURL(`${target}/`);
}

function sqliteBackend(): Backend {
  const folder = mkdtempSync(join(tmpdir(), 'gc-retention-store-'));
  let path = '';
  const run = (sql: string) => {
    const db = new BetterSqlite3(path, { fileMustExist: true });
    try {
      db.exec(sql);
    } finally {
      db.close();
    }
  };
  return {
    name: 'SQLite',
    async openOld(seed) {
      path = join(mkdtempSync(join(folder, 'old-')), 'control.db');
      const db = openSqlite(path, migrationsBefore('migrations', folder, 8), {
        functions: registerActivityFunctions,
        steps: { 6: seedRoutes },
      });
      expect(db.pragma('user_version', { simple: true })).toBe(7);
      for (const sql of seed) db.exec(sql);
      db.close();
      const indexesBefore = await this.activityIndexes();
      return { store: SqliteControlStore.open(path, LIFETIMES), indexesBefore };
    },
    raw: async (sql) => run(sql),
    async activityIndexes() {
      const db = new BetterSqlite3(path, { readonly: true, fileMustExist: true });
      try {
        return db
          .prepare<[], { name: string }>(
            "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'activity' AND name NOT LIKE 'sqlite_%' ORDER BY name",
          )
          .all()
          .map((row) => row.name);
      } finally {
        db.close();
      }
    },
    async cleanup() {
      rmSync(folder, { recursive: true, force: true });
    },
  };
}

function postgresBackend(): Backend {
  const folder = mkdtempSync(join(tmpdir(), 'gc-retention-store-pg-'));
  const drops: (() => Promise<void>)[] = [];
  let url = '';
  const query = async <R extends pg.QueryResultRow>(sql: string) => {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      return (await client.query<R>(sql)).rows;
    } finally {
      await client.end();
    }
  };
  return {
    name: 'PostgreSQL',
    async openOld(seed) {
      const database = await freshDatabase();
      drops.push(database.drop);
      url = database.url;
      const pool = openPool(url);
      try {
        await migratePostgres(pool, 'control', migrationsBefore('migrations-postgres', folder, 6), {
          4: seedPgRoutes,
        });
      } finally {
        await pool.end();
      }
      expect(await query("SELECT version FROM schema_versions WHERE store = 'control'")).toEqual([{ version: 5 }]);
      for (const sql of seed) await query(sql);
      const indexesBefore = await this.activityIndexes();
      return { store: await PgControlStore.open(url, LIFETIMES), indexesBefore };
    },
    raw: async (sql) => {
      await query(sql);
    },
    async activityIndexes() {
      const rows = await query<{ name: string }>(
        "SELECT indexname AS name FROM pg_indexes WHERE tablename = 'activity' AND indexname <> 'activity_pkey' ORDER BY indexname",
      );
      return rows.map((row) => row.name);
    },
    async cleanup() {
      for (const drop of drops) await drop();
      rmSync(folder, { recursive: true, force: true });
    },
  };
}

/** A text value as SQL writes it, for the seed's statements (both backends read the same SQL). */
const literal = (value: string | number | null) =>
  value === null ? 'NULL' : typeof value === 'number' ? String(value) : `'${value.replaceAll("'", "''")}'`;

/** Two organisations, an account and a chained trail, as the version before retention wrote them. */
function oldStore(): string[] {
  const events: ActivityEvent[] = [
    {
      orgId: 'org-a',
      actorId: 'acct-a',
      action: 'member.joined',
      target: 'a@acme.example',
      sourceIp: '10.0.0.1',
      at: 10,
    },
    { orgId: 'org-b', actorId: null, action: 'org.join_policy_changed', target: 'closed', sourceIp: 'local', at: 11 },
    {
      orgId: 'org-a',
      actorId: 'acct-a',
      action: 'org.reporting_zone_changed',
      target: 'Asia/Karachi',
      sourceIp: '10.0.0.1',
      at: 12,
      change: { before: { time_zone: 'UTC' }, after: { time_zone: 'Asia/Karachi' } },
    },
  ];
  const heads = new Map<string, { seq: number; hash: string }>();
  const inserts = events.map((event, i) => {
    const row = chainedRow(event, i + 1, heads.get(event.orgId));
    heads.set(event.orgId, { seq: row.seq, hash: row.hash });
    return `INSERT INTO activity (id, org_id, seq, actor_id, action, target, created_at, source_ip, change, hash)
      VALUES (${chainValues(row).map(literal).join(', ')})`;
  });
  return [
    "INSERT INTO organizations (id, name, name_key, created_at) VALUES ('org-a', 'Acme', 'acme', 1), ('org-b', 'Globex', 'globex', 2)",
    "INSERT INTO accounts (id, org_id, email, password_hash, role, created_at) VALUES ('acct-a', 'org-a', 'a@acme.example', NULL, 'owner', 1)",
    ...inserts,
    ...[...heads].map(
      ([orgId, head]) =>
        `INSERT INTO activity_heads (org_id, seq, hash) VALUES (${literal(orgId)}, ${head.seq}, ${literal(head.hash)})`,
    ),
  ];
}

const CHECK_FAILED = /CHECK constraint failed|violates check constraint/;

describe.each([
  { name: 'SQLite', make: sqliteBackend },
  { name: 'PostgreSQL', make: postgresBackend },
])('retention in the control store on $name', ({ make }) => {
  const backend = make();
  afterAll(() => backend.cleanup());

  it('keeps every row of every organisation of an existing store, and its trail, which takes the new action', async () => {
    const { store, indexesBefore } = await backend.openOld(oldStore());
    try {
      expect(await store.organizations.retentionDays('org-a')).toBeNull();
      expect(await store.organizations.retentionDays('org-b')).toBeNull();
      expect(await store.organizations.retentionDays('no-such-org')).toBeNull();
      expect(await store.organizations.retentions()).toEqual([]);
      // The trail as it was: every place and hash kept, the indexes back.
      expect(await verifyActivity(store, 'org-a')).toMatchObject({ checked: 2, broken: null, done: true });
      expect(await verifyActivity(store, 'org-b')).toMatchObject({ checked: 1, broken: null, done: true });
      expect(await backend.activityIndexes()).toEqual(indexesBefore);
      expect(indexesBefore).toContain('activity_by_place');

      await store.write(async (tx) => {
        await tx.organizations.setRetentionDays('org-a', 30);
        await tx.activity.record({
          orgId: 'org-a',
          actorId: 'acct-a',
          action: 'org.retention_changed',
          target: '30 days',
          sourceIp: '10.0.0.1',
          at: 20,
          change: { before: { days: null }, after: { days: 30 } },
        });
      });
      expect(await store.organizations.retentionDays('org-a')).toBe(30);
      expect(await store.organizations.retentionDays('org-b')).toBeNull();
      expect(await store.organizations.retentions()).toEqual([{ orgId: 'org-a', days: 30 }]);
      expect(await verifyActivity(store, 'org-a')).toMatchObject({ checked: 3, broken: null, done: true });
      expect((await store.activity.list('org-a', 1, 0))[0]).toMatchObject({
        action: 'org.retention_changed',
        target: '30 days',
      });

      await store.write((tx) => tx.organizations.setRetentionDays('org-b', 7));
      expect(await store.organizations.retentions()).toEqual([
        { orgId: 'org-a', days: 30 },
        { orgId: 'org-b', days: 7 },
      ]);
      await store.write((tx) => tx.organizations.setRetentionDays('org-a', null));
      expect(await store.organizations.retentionDays('org-a')).toBeNull();
      expect(await store.organizations.retentions()).toEqual([{ orgId: 'org-b', days: 7 }]);

      // What the database itself refuses: no days below one, no unknown action, no change to the trail.
      await expect(backend.raw("UPDATE organizations SET retention_days = 0 WHERE id = 'org-b'")).rejects.toThrow(
        CHECK_FAILED,
      );
      await expect(
        backend.raw(
          `INSERT INTO activity (id, org_id, seq, action, target, created_at, source_ip, hash) VALUES (99, 'org-a', 99, 'org.deleted', '', 1, 'local', '${'0'.repeat(64)}')`,
        ),
      ).rejects.toThrow(CHECK_FAILED);
      await expect(backend.raw("UPDATE activity SET target = 'x'")).rejects.toThrow(/append-only/);
      await expect(backend.raw('DELETE FROM activity')).rejects.toThrow(/append-only/);
      expect(await store.organizations.retentionDays('org-b')).toBe(7);
    } finally {
      await store.close();
    }
  });
});
