import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { importRequests } from '../../server/admin/import-requests.js';
import { recordRequests } from '../../server/ingest/record-requests.js';
import { ControlStore } from '../../server/stores/control/store.js';
import { BUSY_TIMEOUT_MS } from '../../server/stores/sqlite.js';
import { beginImport, endImport } from '../../server/stores/telemetry/import-transaction.js';
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
function importNoting(path: string, from: number, to: number, during?: () => void): Seen[] {
  const control = ControlStore.open(join(path, '..', 'control.db'), { accessSeconds: 60, refreshSeconds: 600 });
  const seen: Seen[] = [];
  try {
    const rows = Array.from({ length: to - from + 1 }, (_, i) => requestRecord(from + i));
    const report = () => {
      seen.push({ wal: existsSync(`${path}-wal`), journal: existsSync(`${path}-journal`) });
      during?.();
    };
    recordRequests(control, path, rows, { report, every: 1_000 });
  } finally {
    control.close();
  }
  return seen;
}

function storeIn(name: string): string {
  return join(mkdtempSync(join(scratch, `${name}-`)), 'telemetry.db');
}

/**
 * The importer's connection, with `stepIn` run just before its first BEGIN IMMEDIATE: the
 * moment, after leaving WAL mode, when another connection can still take the store back.
 */
function withStepIn(db: BetterSqlite3.Database, stepIn: () => void): BetterSqlite3.Database {
  let pending = true;
  return new Proxy(db, {
    get(target, property) {
      if (property === 'exec') {
        return (sql: string) => {
          if (pending && sql === 'BEGIN IMMEDIATE') {
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

function read<T>(path: string, sql: string): T {
  const db = new BetterSqlite3(path, { readonly: true });
  try {
    return db.prepare(sql).pluck().get() as T;
  } finally {
    db.close();
  }
}

describe('an import', () => {
  it('writes an empty store nothing else has open without a WAL log, then leaves it in WAL mode', () => {
    const path = storeIn('alone');
    const seen = importNoting(path, 1, 5_000);
    // Pages go straight into the file: no log to write them to first and copy them from after.
    expect(seen.length).toBeGreaterThan(0);
    expect(seen.every((s) => !s.wal && s.journal)).toBe(true);
    expect(read(path, 'PRAGMA journal_mode')).toBe('wal');
    expect(read(path, 'SELECT COUNT(*) FROM requests')).toBe(5_000);
  });

  it('shares an empty store another connection has open, which reads on meanwhile', () => {
    const path = storeIn('shared');
    openTelemetry(path).close();
    const other = new BetterSqlite3(path, { readonly: true });
    try {
      const count = other.prepare('SELECT COUNT(*) FROM requests').pluck();
      expect(count.get()).toBe(0);
      const counted: unknown[] = [];
      const seen = importNoting(path, 1, 5_000, () => counted.push(count.get()));
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
      const answers: unknown[] = [];
      const seen = importNoting(path, 1, 5_000, () =>
        answers.push(server.app.telemetry.lastUsedByKey([{ id: 'key-a' }])),
      );
      expect(seen.every((s) => s.wal && !s.journal)).toBe(true);
      expect(answers).toEqual(seen.map(() => new Map()));
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
      spillRowsAlone(importer);
      const started = performance.now();
      server = await startServer({ dataDir: join(path, '..'), telemetryDbPath: path });
      const { client } = await register(server);
      expect((await client.get('/analytics/summary')).status).toBe(503);
      expect((await client.get('/keys')).status).toBe(200);
      // A wait for the lock would be the busy timeout, 5 s, at start and at each read.
      expect(performance.now() - started).toBeLessThan(BUSY_TIMEOUT_MS);
      importer.exec('COMMIT');
      endImport(importer, { empty: true, alone: true });
      expect((await client.get('/analytics/summary')).status).toBe(200);
      expect(server.logs()).toContain('telemetry store reachable again');
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
    const control = ControlStore.open(join(dir, 'control.db'), { accessSeconds: 60, refreshSeconds: 600 });
    try {
      const row = () => importRow(null, null, { organization_name: org });
      const first = row();
      const repeated = await importRequests(control, path, ndjsonFile(dir, [first, row(), { ...first }]));
      expect(repeated).toEqual({ ok: false, error: `line 3: request id ${first.req_id} was already imported` });
      expect(read(path, 'SELECT COUNT(*) FROM requests')).toBe(0);
      expect(read(path, 'PRAGMA journal_mode')).toBe('wal');
      expect(existsSync(`${path}-journal`)).toBe(false);

      expect(await importRequests(control, path, ndjsonFile(dir, [first, row()]))).toEqual({ ok: true, rows: 2 });
      // The store has rows now: its key refuses the id, and the message names the line.
      const again = await importRequests(control, path, ndjsonFile(dir, [row(), first]));
      expect(again).toEqual({ ok: false, error: expect.stringMatching(/^line 2\b.*already imported/) });
      expect(read(path, 'SELECT COUNT(*) FROM requests')).toBe(2);
    } finally {
      control.close();
    }
  });

  it('keeps a store that has rows in WAL mode', () => {
    const path = storeIn('rows');
    importNoting(path, 1, 10);
    const seen = importNoting(path, 11, 5_010);
    expect(seen.every((s) => s.wal && !s.journal)).toBe(true);
    expect(read(path, 'SELECT COUNT(*) FROM requests')).toBe(5_010);
  });

  it('killed after writing into an empty store alone leaves it empty, and the next import works', () => {
    const path = storeIn('killed');
    openTelemetry(path).close();
    const bytesBefore = statSync(path).size;
    const child = spawnSync(process.execPath, ['--import', 'tsx', 'test/server/fixtures/killed-import.ts', path], {
      cwd: root,
      encoding: 'utf8',
    });
    expect(child.signal, child.stderr).toBe('SIGKILL');
    // It died with rows in the file and the pages they overwrote in the journal.
    expect(statSync(path).size).toBeGreaterThan(bytesBefore);
    expect(existsSync(`${path}-journal`)).toBe(true);

    const db = openTelemetry(path);
    try {
      expect(db.prepare('SELECT COUNT(*) FROM requests').pluck().get()).toBe(0);
      expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
      expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    } finally {
      db.close();
    }
    importNoting(path, 1, 3);
    expect(read(path, 'SELECT COUNT(*) FROM requests')).toBe(3);
  });

  describe('whose store another connection takes between the switch out of WAL mode and the lock', () => {
    it('shares it with a connection that opened it, which reads on', () => {
      const path = storeIn('race-open');
      const importer = openTelemetry(path);
      let other: BetterSqlite3.Database | undefined;
      try {
        const transaction = beginImport(withStepIn(importer, () => (other = openTelemetry(path))));
        expect(transaction).toEqual({ empty: true, alone: false });
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
        expect(transaction).toEqual({ empty: false, alone: false });
        expect(importer.pragma('journal_mode', { simple: true })).toBe('wal');
        endImport(importer, transaction);
      } finally {
        importer.close();
      }
      expect(read(path, 'SELECT COUNT(*) FROM requests')).toBe(1);
    });
  });
});
