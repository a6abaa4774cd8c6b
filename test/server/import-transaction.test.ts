import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { importRequests } from '../../server/admin/import-requests.js';
import { runReconcile } from '../../server/admin/reconcile-command.js';
import { reconcileDays } from '../../server/analytics/reconcile.js';
import { AnalyticsQueries } from '../../server/analytics/queries.js';
import { SqliteSql } from '../../server/analytics/sqlite-sql.js';
import { recordRequests } from '../../server/ingest/record-requests.js';
import { SqliteControlStore } from '../../server/stores/control/store.js';
import { BUSY_TIMEOUT_MS } from '../../server/stores/sqlite.js';
import { beginImport, commitImport, endImport } from '../../server/stores/telemetry/import-transaction.js';
import { openTelemetry } from '../../server/stores/telemetry/store.js';
import { register, startServer, type TestServer } from './harness.js';
import { importRow, insertRows, ndjsonFile, requestRecord, spillRowsAlone } from './request-rows.js';

const root = resolve(import.meta.dirname, '../..');
const scratch = mkdtempSync(join(tmpdir(), 'gc-import-tx-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

interface Seen {
  wal: boolean;
  journal: boolean;
}

/** Imports rows `from`..`to` into a store in a new folder, noting at each progress report which files the store had. */
async function importNoting(path: string, from: number, to: number, during?: () => void): Promise<Seen[]> {
  const control = SqliteControlStore.open(join(path, '..', 'control.db'), { accessSeconds: 60, refreshSeconds: 600 });
  const seen: Seen[] = [];
  try {
    const rows = Array.from({ length: to - from + 1 }, (_, i) => requestRecord(from + i));
    const report = () => {
      seen.push({ wal: existsSync(`${path}-wal`), journal: existsSync(`${path}-journal`) });
      during?.();
    };
    await recordRequests(control, path, rows, { report, every: 1_000 });
  } finally {
    await control.close();
  }
  return seen;
}

function storeIn(name: string): string {
  return join(mkdtempSync(join(scratch, `${name}-`)), 'telemetry.db');
}

/**
 * The importer's connection, with `stepIn` run just before its first BEGIN: the
 * moment, after leaving WAL mode, when another connection can still take the store back.
 */
function withStepIn(db: BetterSqlite3.Database, stepIn: () => void): BetterSqlite3.Database {
  let pending = true;
  return new Proxy(db, {
    get(target, property) {
      if (property === 'exec') {
        return (sql: string) => {
          if (pending && (sql === 'BEGIN IMMEDIATE' || sql === 'BEGIN EXCLUSIVE')) {
            pending = false;
            stepIn();
          }
          return target.exec(sql);
        };
      }
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}

/** The store's index by cost as it defines it (the one an import into an empty store builds after its rows). */
const COST_INDEX = "SELECT sql FROM sqlite_master WHERE name = 'requests_by_cost'";

/** The definition a new store gives its index by cost. */
function costIndexOfNewStore(): string {
  const db = openTelemetry(storeIn('new'));
  try {
    return db.prepare(COST_INDEX).pluck().get() as string;
  } finally {
    db.close();
  }
}

function read<T>(path: string, sql: string): T {
  const db = new BetterSqlite3(path, { readonly: true });
  try {
    return db.prepare(sql).pluck().get() as T;
  } finally {
    db.close();
  }
}

/** Runs an import that spills rows from req-`firstRow` on into the store alone, then is killed before its commit. */
function killImportAfterSpilling(path: string, firstRow: number): void {
  const child = spawnSync(
    process.execPath,
    ['--import', 'tsx', 'test/server/fixtures/killed-import.ts', path, String(firstRow)],
    { cwd: root, encoding: 'utf8' },
  );
  expect(child.signal, child.stderr).toBe('SIGKILL');
  expect(existsSync(`${path}-journal`)).toBe(true);
}

/** The store, opened for writing, holds `rows` rows again, whole and in WAL mode. */
function expectRolledBack(path: string, rows: number): void {
  const db = openTelemetry(path);
  try {
    expect(db.prepare('SELECT COUNT(*) FROM requests').pluck().get()).toBe(rows);
    expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
  } finally {
    db.close();
  }
}

describe('an import', () => {
  it('writes an empty store nothing else has open without a WAL log, then leaves it in WAL mode', async () => {
    const path = storeIn('alone');
    const seen = await importNoting(path, 1, 5_000);
    // Pages go straight into the file: no log to write them to first and copy them from after.
    expect(seen.length).toBeGreaterThan(0);
    expect(seen.every((s) => !s.wal && s.journal)).toBe(true);
    expect(read(path, 'PRAGMA journal_mode')).toBe('wal');
    expect(read(path, 'SELECT COUNT(*) FROM requests')).toBe(5_000);
    // Its index by cost, built after the rows, is the store's own, and holds every row.
    expect(read(path, COST_INDEX)).toBe(costIndexOfNewStore());
    expect(read(path, 'PRAGMA integrity_check')).toBe('ok');
    const byCost = 'SELECT COUNT(*) FROM request_rows INDEXED BY requests_by_cost WHERE org_code IS NOT NULL';
    expect(read(path, byCost)).toBe(5_000);
  });

  it('shares an empty store another connection has open, which reads on meanwhile', async () => {
    const path = storeIn('shared');
    openTelemetry(path).close();
    const other = new BetterSqlite3(path, { readonly: true });
    try {
      const count = other.prepare('SELECT COUNT(*) FROM requests').pluck();
      expect(count.get()).toBe(0);
      const counted: unknown[] = [];
      const seen = await importNoting(path, 1, 5_000, () => counted.push(count.get()));
      expect(seen.every((s) => s.wal && !s.journal)).toBe(true);
      // The rows appear at the commit, not before.
      expect(counted.every((n) => n === 0)).toBe(true);
      expect(count.get()).toBe(5_000);
    } finally {
      other.close();
    }
  });

  it('beside a running server, even one not asked anything yet, shares the empty store the server reads', async () => {
    const server = await startServer();
    try {
      const path = server.app.config.telemetryDbPath;
      const answers: Promise<unknown>[] = [];
      const seen = await importNoting(path, 1, 5_000, () =>
        answers.push(server.app.telemetry.lastUsedByKey([{ id: 'key-a' }])),
      );
      expect(seen.every((s) => s.wal && !s.journal)).toBe(true);
      expect(await Promise.all(answers)).toEqual(seen.map(() => new Map()));
      expect(server.logs()).not.toContain('telemetry store unavailable');
    } finally {
      await server.close();
    }
  });

  it('started beside an import that has the store to itself does not wait for it, and reads it after', async () => {
    const path = storeIn('server-after');
    const importer = openTelemetry(path);
    let server: TestServer | undefined;
    try {
      const transaction = spillRowsAlone(importer);
      // The empty store's index by cost waits for the rows, to be built before the commit.
      expect(transaction.deferred).toEqual([costIndexOfNewStore()]);
      expect(importer.prepare(COST_INDEX).pluck().get()).toBeUndefined();
      const started = performance.now();
      server = await startServer({ dataDir: join(path, '..'), telemetryDbPath: path });
      const { client } = await register(server);
      expect((await client.get('/analytics/summary')).status).toBe(503);
      expect((await client.get('/keys')).status).toBe(200);
      // A wait for the lock would be the busy timeout, 5 s, at start and at each read.
      expect(performance.now() - started).toBeLessThan(BUSY_TIMEOUT_MS);
      commitImport(importer, transaction);
      // Built in a cache and with helper threads of its own, the connection's own given back.
      expect(importer.prepare(COST_INDEX).pluck().get()).toBe(costIndexOfNewStore());
      expect(importer.pragma('integrity_check', { simple: true })).toBe('ok');
      expect(importer.pragma('cache_size', { simple: true })).toBe(16);
      expect(importer.pragma('threads', { simple: true })).toBe(0);
      endImport(importer, transaction);
      expect((await client.get('/analytics/summary')).status).toBe(200);
      expect(server.logs()).toContain('telemetry store reachable again');
    } finally {
      importer.close();
      await server?.close();
    }
  });

  it('beside a server that found the store locked, once done, finds it opened again and shares it', async () => {
    const path = storeIn('server-reopens');
    const importer = openTelemetry(path);
    let server: TestServer | undefined;
    try {
      const transaction = spillRowsAlone(importer);
      server = await startServer({ dataDir: join(path, '..'), telemetryDbPath: path });
      expect(server.logs()).toContain('telemetry store unavailable');
      commitImport(importer, transaction);
      endImport(importer, transaction);
      // Nothing is asked of the server: it opens the store again by itself.
      await vi.waitFor(() => expect(server!.logs()).toContain('telemetry store reachable again'), {
        timeout: 10_000,
        interval: 100,
      });
      const next = beginImport(importer, { withRows: true });
      expect(next).toEqual({ empty: false, alone: false, lookups: null, deferred: [] });
      endImport(importer, next);
    } finally {
      importer.close();
      await server?.close();
    }
  });

  it('of a file into an empty store alone names a repeated request id, writes nothing, and leaves WAL mode', async () => {
    const path = storeIn('ndjson');
    const dir = join(path, '..');
    // The organisation is made through a server on another telemetry store, closed after.
    const server = await startServer({ dataDir: dir, telemetryDbPath: join(dir, 'other-telemetry.db') });
    const { org } = await register(server);
    await server.close();
    const control = SqliteControlStore.open(join(dir, 'control.db'), { accessSeconds: 60, refreshSeconds: 600 });
    try {
      const row = () => importRow(null, null, { organization_name: org });
      const first = row();
      const repeated = await importRequests(control, path, [ndjsonFile(dir, [first, row(), { ...first }])]);
      expect(repeated).toEqual({ ok: false, error: `line 3: request id ${first.req_id} was already imported` });
      expect(read(path, 'SELECT COUNT(*) FROM requests')).toBe(0);
      // The index the import dropped to build after its rows is back as it was.
      expect(read(path, COST_INDEX)).toBe(costIndexOfNewStore());
      expect(read(path, 'PRAGMA journal_mode')).toBe('wal');
      expect(existsSync(`${path}-journal`)).toBe(false);

      expect(await importRequests(control, path, [ndjsonFile(dir, [first, row()])])).toEqual({ ok: true, rows: 2 });
      // The store has rows now: its key refuses the id, and the message names the line.
      const again = await importRequests(control, path, [ndjsonFile(dir, [row(), first])]);
      expect(again).toEqual({ ok: false, error: expect.stringMatching(/^line 2\b.*already imported/) });
      expect(read(path, 'SELECT COUNT(*) FROM requests')).toBe(2);
      expect(read(path, 'PRAGMA journal_mode')).toBe('wal');
      expect(existsSync(`${path}-journal`)).toBe(false);
    } finally {
      await control.close();
    }
  });

  it('of rows held in memory (live telemetry) keeps a store that has rows in WAL mode', async () => {
    const path = storeIn('rows');
    await importNoting(path, 1, 10);
    const seen = await importNoting(path, 11, 5_010);
    expect(seen.every((s) => s.wal && !s.journal)).toBe(true);
    expect(read(path, 'SELECT COUNT(*) FROM requests')).toBe(5_010);
  });

  it('killed after writing into a store with rows alone leaves its rows, reconcile reads them, and the next import works', async () => {
    const path = storeIn('killed-rows');
    await importNoting(path, 1, 10);
    killImportAfterSpilling(path, 1_000);
    // A read-only connection cannot open the store before the journal is rolled back; reconcile's can.
    expect(() => read(path, 'SELECT COUNT(*) FROM requests')).toThrow(/readonly/i);
    const control = SqliteControlStore.open(join(path, '..', 'control.db'), { accessSeconds: 60, refreshSeconds: 600 });
    try {
      const now = Date.now();
      const window = reconcileDays({ days: 1 }, now, 31);
      if ('error' in window) throw new Error(window.error);
      const report = await runReconcile(control, { path }, { orgId: 'org-a', projectId: null, days: window.days, now });
      expect(report?.kinds.map((kind) => kind.kind)).toContain('totals');
    } finally {
      await control.close();
    }
    expectRolledBack(path, 10);
    await importNoting(path, 11, 13);
    expect(read(path, 'SELECT COUNT(*) FROM requests')).toBe(13);
  });

  it('killed after writing into an empty store alone leaves it empty, and the next import works', async () => {
    const path = storeIn('killed');
    openTelemetry(path).close();
    const bytesBefore = statSync(path).size;
    killImportAfterSpilling(path, 1);
    // It died with rows in the file and the pages they overwrote in the journal.
    expect(statSync(path).size).toBeGreaterThan(bytesBefore);
    expectRolledBack(path, 0);
    expect(read(path, COST_INDEX)).toBe(costIndexOfNewStore());
    await importNoting(path, 1, 3);
    expect(read(path, 'SELECT COUNT(*) FROM requests')).toBe(3);
  });

  describe('whose store another connection takes between the switch out of WAL mode and the lock', () => {
    it('shares it with a connection that opened it, which reads on', () => {
      const path = storeIn('race-open');
      const importer = openTelemetry(path);
      let other: BetterSqlite3.Database | undefined;
      try {
        const transaction = beginImport(withStepIn(importer, () => (other = openTelemetry(path))));
        expect(transaction).toEqual({ empty: true, alone: false, lookups: null, deferred: [] });
        expect(importer.pragma('journal_mode', { simple: true })).toBe('wal');
        insertRows(importer, 3);
        expect(other?.prepare('SELECT COUNT(*) FROM requests').pluck().get()).toBe(0);
        importer.exec('COMMIT');
        endImport(importer, transaction);
        expect(other?.prepare('SELECT COUNT(*) FROM requests').pluck().get()).toBe(3);
      } finally {
        other?.close();
        importer.close();
      }
    });

    it('shares it, not empty, with a connection that wrote rows into it', () => {
      const path = storeIn('race-rows');
      const importer = openTelemetry(path);
      try {
        const transaction = beginImport(
          withStepIn(importer, () => {
            // A plain connection, which leaves the journal mode as it finds it.
            const other = new BetterSqlite3(path);
            insertRows(other, 1);
            other.close();
          }),
        );
        expect(transaction).toEqual({ empty: false, alone: false, lookups: null, deferred: [] });
        expect(importer.pragma('journal_mode', { simple: true })).toBe('wal');
        endImport(importer, transaction);
      } finally {
        importer.close();
      }
      expect(read(path, 'SELECT COUNT(*) FROM requests')).toBe(1);
    });
  });
});

describe('an import of a file into a store with rows', () => {
  let dir: string;
  let org: string;
  beforeAll(async () => {
    dir = mkdtempSync(join(scratch, 'files-'));
    // The organisation is made through a server on another telemetry store, closed after.
    const server = await startServer({ dataDir: dir, telemetryDbPath: join(dir, 'other-telemetry.db') });
    org = (await register(server)).org;
    await server.close();
  });

  /** `count` rows of the organisation: every other one for the customer acme, each with a trace id of its own. */
  const rows = (count: number, prefix: string) =>
    Array.from({ length: count }, (_, i) =>
      importRow(null, null, {
        organization_name: org,
        metadata: { customer: i % 2 === 0 ? 'acme' : 'globex', trace: `${prefix}-trace-${i}` },
      }),
    );

  /** Imports `lines` into `path`, noting at each progress report which files the store had. */
  async function importFileNoting(path: string, lines: object[], during?: () => void): Promise<Seen[]> {
    const control = SqliteControlStore.open(join(dir, 'control.db'), { accessSeconds: 60, refreshSeconds: 600 });
    const seen: Seen[] = [];
    try {
      const report = () => {
        seen.push({ wal: existsSync(`${path}-wal`), journal: existsSync(`${path}-journal`) });
        during?.();
      };
      const result = await importRequests(control, path, [ndjsonFile(dir, lines)], { report, every: 1_000 });
      expect(result).toEqual({ ok: true, rows: lines.length });
    } finally {
      await control.close();
    }
    expect(seen.length).toBeGreaterThan(0);
    return seen;
  }

  async function search(path: string, text: string): Promise<number> {
    const db = new BetterSqlite3(path, { readonly: true });
    try {
      const orgId = db.prepare('SELECT org_id FROM requests LIMIT 1').pluck().get() as string;
      const filter = { orgId, from: 0, to: Date.now() + 60_000, search: text };
      return (await new AnalyticsQueries(new SqliteSql(db)).run({ kind: 'requests', filter, limit: 1, offset: 0 }))
        .total;
    } finally {
      db.close();
    }
  }

  it('nothing else has open writes it without a WAL log, and its shared terms go on from the stored ones', async () => {
    const path = join(mkdtempSync(join(dir, 'alone-')), 'telemetry.db');
    await importFileNoting(path, rows(2_000, 'first'));
    const seen = await importFileNoting(path, rows(3_000, 'second'));
    expect(seen.every((s) => !s.wal && s.journal)).toBe(true);
    expect(read(path, 'PRAGMA journal_mode')).toBe('wal');
    expect(read(path, 'SELECT COUNT(*) FROM requests')).toBe(5_000);
    // The reading thread was handed the stored terms: acme stays one shared term, found in every row.
    expect(read(path, "SELECT COUNT(*) FROM search_terms WHERE text = 'acme'")).toBe(1);
    expect(await search(path, 'acme')).toBe(2_500);
    expect(await search(path, 'globex')).toBe(2_500);
    expect(await search(path, 'second-trace-2999')).toBe(1);
    expect(await search(path, 'first-trace-1999')).toBe(1);
  });

  it('another connection has open shares it in WAL mode, and that connection reads on', async () => {
    const path = join(mkdtempSync(join(dir, 'shared-')), 'telemetry.db');
    await importFileNoting(path, rows(1_000, 'first'));
    const other = new BetterSqlite3(path, { readonly: true });
    try {
      const count = other.prepare('SELECT COUNT(*) FROM requests').pluck();
      const counted: unknown[] = [];
      const seen = await importFileNoting(path, rows(2_000, 'second'), () => counted.push(count.get()));
      expect(seen.every((s) => s.wal && !s.journal)).toBe(true);
      expect(counted.every((n) => n === 1_000)).toBe(true);
      expect(count.get()).toBe(3_000);
    } finally {
      other.close();
    }
    expect(await search(path, 'acme')).toBe(1_500);
  });

  it('whose shared terms are more than the reading thread reads at its start shares it in WAL mode', async () => {
    const path = join(mkdtempSync(join(dir, 'many-')), 'telemetry.db');
    await importFileNoting(path, rows(1_000, 'first'));
    const db = openTelemetry(path);
    try {
      // Shared terms of another organisation, past what a planner preloads: it would ask the store for them.
      db.prepare(
        `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 100001)
        INSERT INTO search_common (org_id, text, term) SELECT 'org-other', 'text-' || i, 1000000 + i FROM n`,
      ).run();
    } finally {
      db.close();
    }
    const seen = await importFileNoting(path, rows(2_000, 'second'));
    expect(seen.every((s) => s.wal && !s.journal)).toBe(true);
    expect(read(path, 'SELECT COUNT(*) FROM requests')).toBe(3_000);
    expect(await search(path, 'acme')).toBe(1_500);
  });
});
