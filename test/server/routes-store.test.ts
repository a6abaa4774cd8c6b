import BetterSqlite3 from 'better-sqlite3';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withRouteActive } from '../../server/domain/route-models.js';
import { catalogueDocument, type RoutesDocument } from '../../server/domain/routes-document.js';
import { registerActivityFunctions } from '../../server/stores/control/activity-hash.js';
import { PgControlStore } from '../../server/stores/control/postgres/store.js';
import { SqliteControlStore, type ControlRecords } from '../../server/stores/control/store.js';
import { migratePostgres, openPool } from '../../server/stores/postgres.js';
import { openSqlite } from '../../server/stores/sqlite.js';
import { freshDatabase } from '../postgres/database.js';

/**
 * The routes document in the control store (route-documents.ts), one body run on both backends.
 * Two handles on one store stand for two processes: each has its own connections and caches.
 */

const LIFETIMES = { accessSeconds: 900, refreshSeconds: 3600 };
const NOW = Date.parse('2026-11-02T10:00:00Z');
/** A SQLite handle sees another connection's commit from the next turn of its event loop (read-cache.ts). */
const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

type Handle = ControlRecords & { close(): Promise<void> };

interface Backend {
  /** A new store, and a second handle on it. */
  open(): Promise<{ store: Handle; other: Handle }>;
  /**
   * A store as it was before routes were data, its `models` table edited by `sql` (an operator's
   * set-model and add-model), then opened by this version: the migration runs.
   */
  openOld(sql: string): Promise<{ old: Handle; oldRaw: (sql: string) => Promise<void> }>;
  /** Runs a statement beside the repositories, as an operator editing the store would. */
  raw(sql: string): Promise<void>;
  cleanup(): Promise<void>;
}

/** The first `count` migrations of `folder`, alone in a folder of their own: a store of an older version. */
function firstMigrations(folder: string, scratch: string, count: number): URL {
  const source = new URL(`../../server/stores/control/${folder}/`, import.meta.url);
  const target = mkdtempSync(join(scratch, 'migrations-'));
  for (let version = 1; version <= count; version++) {
    const name = {
      migrations: ['001_init', '002_join_policy', '003_settled_spend', '004_reporting_zone', '005_activity_chain'],
      'migrations-postgres': ['001_control', '002_change_count', '003_admission_quota'],
    }[folder]![version - 1]!;
    copyFileSync(new URL(`${name}.sql`, source), join(target, `${name}.sql`));
  }
  return pathToFileURL(`${target}/`);
}

function sqliteRaw(path: string, sql: string): void {
  const db = new BetterSqlite3(path, { fileMustExist: true });
  try {
    db.exec(sql);
  } finally {
    db.close();
  }
}

function sqliteBackend(): Backend {
  const folder = mkdtempSync(join(tmpdir(), 'gc-routes-store-'));
  let path = '';
  return {
    async open() {
      path = join(mkdtempSync(join(folder, 'store-')), 'control.db');
      return { store: SqliteControlStore.open(path, LIFETIMES), other: SqliteControlStore.open(path, LIFETIMES) };
    },
    async openOld(sql) {
      const old = join(mkdtempSync(join(folder, 'old-')), 'control.db');
      const db = openSqlite(old, firstMigrations('migrations', folder, 5), { functions: registerActivityFunctions });
      db.exec(sql);
      db.close();
      return { old: SqliteControlStore.open(old, LIFETIMES), oldRaw: async (sql) => sqliteRaw(old, sql) };
    },
    raw: async (sql) => sqliteRaw(path, sql),
    async cleanup() {
      rmSync(folder, { recursive: true, force: true });
    },
  };
}

function postgresBackend(): Backend {
  const folder = mkdtempSync(join(tmpdir(), 'gc-routes-store-pg-'));
  const drops: (() => Promise<void>)[] = [];
  let url = '';
  const run = async (at: string, sql: string) => {
    const client = new pg.Client({ connectionString: at });
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  };
  return {
    async open() {
      const database = await freshDatabase();
      drops.push(database.drop);
      url = database.url;
      return { store: await PgControlStore.open(url, LIFETIMES), other: await PgControlStore.open(url, LIFETIMES) };
    },
    async openOld(sql) {
      const database = await freshDatabase();
      drops.push(database.drop);
      const pool = openPool(database.url);
      try {
        await migratePostgres(pool, 'control', firstMigrations('migrations-postgres', folder, 3));
      } finally {
        await pool.end();
      }
      await run(database.url, sql);
      return {
        old: await PgControlStore.open(database.url, LIFETIMES),
        oldRaw: (sql: string) => run(database.url, sql),
      };
    },
    raw: (sql) => run(url, sql),
    async cleanup() {
      for (const drop of drops) await drop();
      rmSync(folder, { recursive: true, force: true });
    },
  };
}

/** The document with one route's price changed: a new version's worth of change. */
function repriced(document: RoutesDocument, input: number): RoutesDocument {
  const route = document.routes['openai/gpt-4o-mini']!;
  return {
    ...document,
    routes: { ...document.routes, 'openai/gpt-4o-mini': { ...route, price: { ...route.price, input } } },
  };
}

describe.each([
  { name: 'SQLite', make: sqliteBackend },
  { name: 'PostgreSQL', make: postgresBackend },
])('the routes document on $name', ({ make }) => {
  const backend = make();
  let store: Handle;
  let other: Handle;

  beforeAll(async () => {
    ({ store, other } = await backend.open());
  });
  afterAll(async () => {
    await store?.close();
    await other?.close();
    await backend.cleanup();
  });

  it('starts at version 1, the catalogue, seeded', async () => {
    const first = await store.routes.current();
    expect(first).toEqual({ version: 1, applied_at: expect.any(Number), document: catalogueDocument() });
    expect(await store.routes.history()).toEqual([{ version: 1, applied_at: first.applied_at, source: 'seed' }]);
  });

  it('is one frozen object a version, kept while the store changes and no version is applied', async () => {
    const first = await other.routes.current();
    expect(await other.routes.current()).toBe(first);
    expect(Object.isFrozen(first.document.routes['openai/gpt-4o']!.targets[0])).toBe(true);
    expect(() => {
      (first.document.routes['openai/gpt-4o'] as { active: boolean }).active = false;
    }).toThrow(TypeError);
    // Another write moves the store's change count: the version is read again, its document kept.
    await store.write((tx) => tx.organizations.create('Unrelated', NOW));
    await nextTurn();
    expect(await other.routes.current()).toBe(first);
  });

  it('applies the next version; compare-and-swap with expectVersion; the same document again stores nothing', async () => {
    const { version, document } = await store.routes.current();
    const cheaper = repriced(document, 40);
    await expect(store.routes.apply(cheaper, 'test', NOW)).rejects.toThrow(/inside a control transaction/);

    expect(await store.write((tx) => tx.routes.apply(cheaper, 'routes apply', NOW + 1, version))).toEqual({
      kind: 'applied',
      version: version + 1,
    });
    // A second operator who exported the same version: refused, told which version is current.
    expect(
      await store.write((tx) => tx.routes.apply(repriced(document, 30), 'routes apply', NOW + 2, version)),
    ).toEqual({ kind: 'conflict', current: version + 1 });
    expect(await store.write((tx) => tx.routes.apply(cheaper, 'routes apply', NOW + 3))).toEqual({
      kind: 'unchanged',
      version: version + 1,
    });
    const current = await store.routes.current();
    expect(current).toEqual({ version: version + 1, applied_at: NOW + 1, document: cheaper });
    expect((await store.routes.history()).slice(0, 2)).toEqual([
      { version: version + 1, applied_at: NOW + 1, source: 'routes apply' },
      { version, applied_at: expect.any(Number), source: expect.any(String) },
    ]);
  });

  it('a version applied through one handle is served by the other from its next read, whole', async () => {
    await nextTurn();
    const before = await other.routes.current();
    const next = withRouteActive(before.document, 'openai/gpt-4o', false)!;
    const applied = await store.write((tx) => tx.routes.apply(next, 'set-model', NOW + 10));
    expect(applied).toEqual({ kind: 'applied', version: before.version + 1 });
    await nextTurn();
    const after = await other.routes.current();
    expect(after.version).toBe(before.version + 1);
    expect(after.document).toEqual(next);
    expect(after.document.routes['openai/gpt-4o']!.active).toBe(false);
    expect(await other.routes.current()).toBe(after);
  });

  it('never changes or removes a stored version', async () => {
    await expect(backend.raw("UPDATE route_documents SET source = 'edited' WHERE version = 1")).rejects.toThrow(
      /append-only/,
    );
    await expect(backend.raw('DELETE FROM route_documents WHERE version = 1')).rejects.toThrow(/append-only/);
    expect((await store.routes.history()).at(-1)).toMatchObject({ version: 1, source: 'seed' });
  });

  it("migrates a store whose routes were in the models table: version 1 keeps each route's flag", async () => {
    const { old, oldRaw } = await backend.openOld(`
      UPDATE models SET active = 0 WHERE id = 'openai/gpt-4o';
      UPDATE models SET active = 1 WHERE id = 'openai/gpt-3.5-turbo';
      DELETE FROM models WHERE id = 'openai/o3-mini';
      INSERT INTO models (id, provider, active) VALUES ('acme/unpriced', 'acme', 1);
    `);
    try {
      const migrated = await old.routes.current();
      expect(migrated.version).toBe(1);
      const expected = catalogueDocument();
      expected.routes['openai/gpt-4o']!.active = false;
      expected.routes['openai/gpt-3.5-turbo']!.active = true;
      // A catalogue route without a row was refused as unknown: inactive. A row without a price was never served: gone.
      expected.routes['openai/o3-mini']!.active = false;
      expect(migrated.document).toEqual(expected);
      expect(migrated.document.routes['acme/unpriced']).toBeUndefined();
      expect(await old.routes.history()).toEqual([
        { version: 1, applied_at: migrated.applied_at, source: 'migrated from models' },
      ]);
      // The table is gone: the document is the one place routes are kept.
      await expect(oldRaw('SELECT 1 FROM models')).rejects.toThrow(/models/);
    } finally {
      await old.close();
    }
  });
});
