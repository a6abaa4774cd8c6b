import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { runAdmin } from '../../server/admin/commands.js';
import { recordRequests, type ImportEvent } from '../../server/ingest/record-requests.js';
import { SqliteControlStore } from '../../server/stores/control/store.js';
import { REQUEST_COLUMNS, type RequestRecord } from '../../server/stores/telemetry/request-record.js';
import { migrate } from '../../server/stores/migrate.js';
import { registerTelemetryFunctions } from '../../server/stores/telemetry/sql-functions.js';
import { openTelemetry, TELEMETRY_MIGRATIONS } from '../../server/stores/telemetry/store.js';
import { dropAddedColumns, importRow, ndjsonFile, requestRecord } from './request-rows.js';
import { register, startServer, type TestClient, type TestServer } from './harness.js';

const scratch = mkdtempSync(join(tmpdir(), 'gc-telemetry-test-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const row = (keyId: string, projectId: string, timestamp: string) => importRow(keyId, projectId, { timestamp });

async function importRows(server: TestServer, rows: object[], telemetryDb?: string): Promise<void> {
  const args = ['import-requests', '--file', ndjsonFile(scratch, rows), '--data-dir', server.dataDir];
  if (telemetryDb) args.push('--telemetry-db', telemetryDb);
  const printed: string[] = [];
  const code = await runAdmin(args, (line) => printed.push(line));
  expect(code).toBe(0);
  expect(printed.join('\n')).toContain(`imported ${rows.length} request(s)`);
}

async function setUp(server: TestServer) {
  const { client } = await register(server);
  const projectId: string = (await client.get('/projects')).body.projects[0].id;
  const keys: string[] = [];
  for (const name of ['busy key', 'quiet key', 'unused key']) {
    const created = await client.post('/keys', { project_id: projectId, name });
    expect(created.status).toBe(201);
    keys.push(created.body.id);
  }
  return { client, projectId, keys };
}

async function lastUsed(client: TestClient): Promise<Record<string, string | null>> {
  const answer = await client.get('/keys');
  expect(answer.status).toBe(200);
  return Object.fromEntries(
    answer.body.keys.map((k: { id: string; last_used_at: string | null }) => [k.id, k.last_used_at]),
  );
}

describe('last_used_at comes from the request log', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer();
  });
  afterAll(() => server.close());

  it("shows each key's newest request and null for a key never used", async () => {
    const { client, projectId, keys } = await setUp(server);
    const [busy, quiet, unused] = keys as [string, string, string];
    expect(await lastUsed(client)).toEqual({ [busy]: null, [quiet]: null, [unused]: null });

    await importRows(server, [
      row(busy, projectId, '2026-11-20T09:45:00Z'),
      row(busy, projectId, '2026-11-20T10:00:00.250Z'), // the newest in time
      row(busy, projectId, '2026-11-20T14:30:00+05:00'), // 09:30 UTC: later as text, older in time
      row(quiet, projectId, '2026-11-19T23:59:59.999Z'),
    ]);

    expect(await lastUsed(client)).toEqual({
      [busy]: '2026-11-20T10:00:00.250Z',
      [quiet]: '2026-11-19T23:59:59.999Z',
      [unused]: null,
    });

    // A newer import moves it forward, on the running server.
    await importRows(server, [row(quiet, projectId, '2026-11-21T06:00:00Z')]);
    expect((await lastUsed(client))[quiet]).toBe('2026-11-21T06:00:00.000Z');
  });
});

describe('an unreachable telemetry store', () => {
  const missingDir = join(scratch, 'not-created-yet');
  const telemetryDbPath = join(missingDir, 'telemetry.db');
  let server: TestServer;
  let client: TestClient;
  let projectId: string;
  let keys: string[];

  beforeAll(async () => {
    server = await startServer({ telemetryDbPath });
    ({ client, projectId, keys } = await setUp(server));
  });
  afterAll(() => server.close());

  it('leaves every last_used_at null while the rest of the API keeps working', async () => {
    const listed = await client.get('/keys');
    expect(listed.status).toBe(200);
    expect(listed.body.keys).toHaveLength(3);
    for (const key of listed.body.keys) expect(key.last_used_at).toBeNull();

    const patched = await client.patch(`/keys/${keys[0]}`, { rate_limit_rpm: 90 });
    expect(patched.status).toBe(200);
    const created = await client.post('/keys', { project_id: projectId, name: 'made while telemetry is down' });
    expect(created.status).toBe(201);
    expect((await client.delete(`/keys/${created.body.id}`)).status).toBe(200);
    expect((await client.post('/vault/keys', { provider: 'openai', api_key: 'sk-provider-0000' })).status).toBe(200);
    for (const path of ['/auth/me', '/projects', '/members', '/vault/keys', '/models', '/activity']) {
      expect((await client.get(path)).status).toBe(200);
    }
    const actions = (await client.get('/activity')).body.events.map((e: { action: string }) => e.action);
    expect(actions).toEqual(expect.arrayContaining(['api_key.updated', 'api_key.revoked', 'vault_key.set']));
    expect(server.logs()).toContain('telemetry store unavailable');
  });

  it('recovers without a restart once the store can be opened', async () => {
    mkdirSync(missingDir);
    const [first, second, third] = keys as [string, string, string];
    await importRows(
      server,
      [row(first, projectId, '2026-11-21T08:00:00Z'), row(second, projectId, '2026-11-21T08:30:00.5Z')],
      telemetryDbPath,
    );
    expect(await lastUsed(client)).toEqual({
      [first]: '2026-11-21T08:00:00.000Z',
      [second]: '2026-11-21T08:30:00.500Z',
      [third]: null,
    });
    expect(server.logs()).toContain('telemetry store reachable again');
  });
});

/**
 * A data folder whose telemetry store is a current one taken back to version 5: 006's minute
 * rollups are missing (or, with `in006sWay`, still there for 006 to fail on), and so are 007's
 * spend outbox and the dashboard's cells of 008 and 009 (and 010's columns of them).
 */
function storeAtVersion5(name: string, in006sWay = false): { dataDir: string; telemetryDbPath: string } {
  const dataDir = mkdtempSync(join(scratch, name));
  const telemetryDbPath = join(dataDir, 'telemetry.db');
  const old = openTelemetry(telemetryDbPath);
  if (!in006sWay) old.exec('DROP TABLE rollup_dim_1m');
  old.exec('DROP TABLE spend_outbox');
  for (const grain of ['5m', 'hour', 'day']) old.exec(`DROP TABLE rollup_board_${grain}`);
  for (const grain of ['hour', 'day']) old.exec(`DROP TABLE rollup_cache_${grain}`);
  dropAddedColumns(old);
  old.pragma('user_version = 5');
  old.close();
  return { dataDir, telemetryDbPath };
}

describe('a telemetry store of an earlier version', () => {
  it('is upgraded in a worker from the start of the server while the API goes on answering, naming each migration first', async () => {
    const { dataDir, telemetryDbPath } = storeAtVersion5('upgrade-');
    // An import in another process holds the write lock: the upgrade waits for it.
    const importer = new BetterSqlite3(telemetryDbPath);
    importer.exec('BEGIN IMMEDIATE');

    const server = await startServer({ dataDir, telemetryDbPath });
    try {
      const { client, projectId, keys } = await setUp(server);
      // The server started the upgrade; until it is done the store reads as unavailable.
      expect((await lastUsed(client))[keys[0]!]).toBeNull();
      expect((await client.get('/analytics/summary')).status).toBe(503);
      expect((await client.get('/projects')).status).toBe(200);
      expect(server.logs()).not.toContain('telemetry store upgraded');

      importer.exec('COMMIT');
      await vi.waitFor(() => expect(server.logs()).toContain('telemetry store upgraded'), { timeout: 20_000 });
      await importRows(server, [row(keys[0]!, projectId, '2026-11-20T09:45:00Z')]);
      expect((await lastUsed(client))[keys[0]!]).toBe('2026-11-20T09:45:00.000Z');
      expect((await client.get('/analytics/summary')).status).toBe(200);
      const lines = server.logs().split('\n');
      const upgrades = lines.filter((line) => line.includes('upgrading the telemetry store'));
      expect(upgrades.map((line) => JSON.parse(line) as { migration: string; path: string })).toMatchObject([
        { migration: '006_minute_rollups.sql', path: telemetryDbPath },
        { migration: '007_spend_outbox.sql', path: telemetryDbPath },
        { migration: '008_dashboard_rollups.sql', path: telemetryDbPath },
        { migration: '009_cache_rollups.sql', path: telemetryDbPath },
        { migration: '010_health_rollups.sql', path: telemetryDbPath },
        { migration: '011_attempts.sql', path: telemetryDbPath },
        { migration: '012_api.sql', path: telemetryDbPath },
        { migration: '013_retention.sql', path: telemetryDbPath },
        { migration: '014_retention_terms.sql', path: telemetryDbPath },
        { migration: '015_coded_requests.sql', path: telemetryDbPath },
        { migration: '016_coded_search_terms.sql', path: telemetryDbPath },
        { migration: '017_compact_request_ids.sql', path: telemetryDbPath },
        { migration: '018_compact_timings.sql', path: telemetryDbPath },
        { migration: '019_metadata_shapes.sql', path: telemetryDbPath },
        { migration: '020_metadata_search_columns.sql', path: telemetryDbPath },
        { migration: '021_row_terms.sql', path: telemetryDbPath },
        { migration: '022_org_index.sql', path: telemetryDbPath },
        { migration: '023_fine_cells.sql', path: telemetryDbPath },
        { migration: '024_row_signatures.sql', path: telemetryDbPath },
        { migration: '025_row_chunks.sql', path: telemetryDbPath },
        { migration: '026_offset_columns.sql', path: telemetryDbPath },
        { migration: '027_cost_index_by_day.sql', path: telemetryDbPath },
      ]);
      // It waited for the lock instead of failing on it.
      expect(lines.filter((line) => line.includes('telemetry store unavailable'))).toEqual([]);
    } finally {
      importer.close();
      await server.close();
    }
    const db = new BetterSqlite3(telemetryDbPath, { readonly: true });
    expect(db.pragma('user_version', { simple: true })).toBe(27);
    // One cell of each dimension; the row is older than the days minute cells are kept for (fine-cells.ts).
    expect(db.prepare('SELECT COUNT(*) AS n FROM rollup_dim_hour').get()).toEqual({ n: 4 });
    expect(db.prepare('SELECT COUNT(*) AS n FROM rollup_dim_1m').get()).toEqual({ n: 0 });
    // The import after the upgrade added to 008's dashboard cells.
    const rows = db.prepare('SELECT COUNT(*) FROM requests').pluck().get();
    expect(rows).toBeGreaterThan(0);
    expect(db.prepare('SELECT SUM(requests) FROM rollup_board_day WHERE dim = 0').pluck().get()).toBe(rows);
    db.close();
  });

  it('reads as soon as another connection has brought it up to date, though its own upgrade still waits for the lock', async () => {
    const { dataDir, telemetryDbPath } = storeAtVersion5('upgraded-elsewhere-');
    const importer = new BetterSqlite3(telemetryDbPath);
    importer.exec('BEGIN IMMEDIATE');
    const server = await startServer({ dataDir, telemetryDbPath });
    let holder: BetterSqlite3.Database | null = null;
    try {
      const { client } = await setUp(server);
      expect((await client.get('/analytics/summary')).status).toBe(503);
      await vi.waitFor(() => expect(server.logs()).toContain('upgrading it in the background'));

      // Another import upgrades the store and goes on writing: the server's worker waits on.
      importer.exec('ROLLBACK');
      openTelemetry(telemetryDbPath).close();
      holder = new BetterSqlite3(telemetryDbPath);
      holder.exec('BEGIN IMMEDIATE');

      expect((await client.get('/analytics/summary')).status).toBe(200);
      const lines = server.logs().split('\n');
      expect(lines.filter((line) => line.includes('telemetry store upgraded'))).toHaveLength(1);
      expect(lines.filter((line) => line.includes('telemetry store unavailable'))).toEqual([]);
    } finally {
      holder?.close();
      importer.close();
      await server.close();
    }
  });

  it('says so when an upgrade fails, and does not start another at every read', async () => {
    const { dataDir, telemetryDbPath } = storeAtVersion5('failed-upgrade-', true);
    const server = await startServer({ dataDir, telemetryDbPath });
    try {
      const { client, keys } = await setUp(server);
      expect((await lastUsed(client))[keys[0]!]).toBeNull();
      await vi.waitFor(() => expect(server.logs()).toContain('telemetry store unavailable'), { timeout: 20_000 });
      for (let i = 0; i < 3; i++) {
        expect((await lastUsed(client))[keys[0]!]).toBeNull();
        expect((await client.get('/analytics/summary')).status).toBe(503);
      }
      const lines = server.logs().split('\n');
      expect(lines.filter((line) => line.includes('upgrading it in the background'))).toHaveLength(1);
      expect(JSON.parse(lines.find((line) => line.includes('telemetry store unavailable'))!).err.message).toMatch(
        /already exists/,
      );
    } finally {
      await server.close();
    }
  });

  it('is upgraded once when two connections find it behind at the same time', () => {
    const path = storeAtVersion5('race-').telemetryDbPath;
    // Another connection (the admin command, say) applies 006 after this one has read the
    // version and before its own transaction starts.
    const first = new BetterSqlite3(path);
    registerTelemetryFunctions(first);
    try {
      migrate(first, TELEMETRY_MIGRATIONS, () => openTelemetry(path).close());
      expect(first.pragma('user_version', { simple: true })).toBe(27);
      expect(first.prepare("SELECT COUNT(*) AS n FROM sqlite_schema WHERE name = 'rollup_dim_1m'").get()).toEqual({
        n: 1,
      });
    } finally {
      first.close();
    }
  });

  it('says nothing of upgrading when the store is new', async () => {
    const server = await startServer();
    try {
      const { client } = await setUp(server);
      await lastUsed(client);
      expect(server.logs()).not.toContain('upgrading the telemetry store');
    } finally {
      await server.close();
    }
  });
});

describe('recording requests', () => {
  it('stores every column of a record as given', async () => {
    const control = SqliteControlStore.open(join(scratch, 'record-control.db'), {
      accessSeconds: 60,
      refreshSeconds: 600,
    });
    const path = join(scratch, 'record-telemetry.db');
    // Every column differs from the others of its type, and the 0/1 flags differ between the
    // two records: a value bound to the wrong column shows.
    const records: RequestRecord[] = [
      {
        req_id: 'req-a',
        ts: 1_700_000_000_001,
        org_id: 'org-a',
        project_id: 'project-a',
        key_id: 'key-a',
        model: 'openai/gpt-4o-mini',
        status: 200,
        stream: 1,
        total_ms: 901.5,
        ttft_ms: 102.25,
        tpot_ms: 3.125,
        pre_dispatch_ms: 4.5,
        prompt_tokens: 11,
        tokens_generated: 12,
        cache_creation_input_tokens: 13,
        cache_read_input_tokens: 14,
        total_tokens: 15,
        tokens_estimated: 0,
        cost_micro: 16_000,
        is_byok: 0,
        termination_reason: 'completed',
        upstream_error: 'upstream said no',
        upstream_model: 'gpt-4o-mini-2024-07-18',
        served_by: 'openai/gpt-4o-mini-2024-07-18',
        attempts: '[{"target":"openai/gpt-4o-mini-2024-07-18","status":200,"error":null,"ms":897,"decision":"served"}]',
        api: 'messages',
        user_agent: 'agent/1.0',
        metadata: '{"feature":"chat"}',
      },
      {
        req_id: 'req-b',
        ts: 1_700_000_000_002,
        org_id: 'org-b',
        project_id: null,
        key_id: null,
        model: 'anthropic/claude-3-5-haiku',
        status: 503,
        stream: 0,
        total_ms: 21.75,
        ttft_ms: null,
        tpot_ms: null,
        pre_dispatch_ms: 22.5,
        prompt_tokens: null,
        tokens_generated: 0,
        cache_creation_input_tokens: null,
        cache_read_input_tokens: null,
        total_tokens: 23,
        tokens_estimated: 1,
        cost_micro: 0,
        is_byok: 1,
        termination_reason: 'upstream_error',
        upstream_error: null,
        upstream_model: null,
        served_by: null,
        attempts: null,
        api: null,
        user_agent: 'agent/2.0',
        metadata: '{}',
      },
    ];
    try {
      expect(await recordRequests(control, path, records)).toBe(2);
    } finally {
      await control.close();
    }
    const db = new BetterSqlite3(path, { readonly: true });
    try {
      const stored = db.prepare(`SELECT ${REQUEST_COLUMNS.join(', ')} FROM requests ORDER BY req_id`).all();
      expect(stored).toEqual(records);
    } finally {
      db.close();
    }
  });

  it('reports its progress: every so many rows written, then before the commit', async () => {
    const dataDir = mkdtempSync(join(scratch, 'progress-'));
    const control = SqliteControlStore.open(join(dataDir, 'control.db'), { accessSeconds: 60, refreshSeconds: 600 });
    const events: ImportEvent[] = [];
    try {
      const rows = [1, 2, 3, 4, 5].map(requestRecord);
      await recordRequests(control, join(dataDir, 'telemetry.db'), rows, { report: (e) => events.push(e), every: 2 });
    } finally {
      await control.close();
    }
    // A new store has nothing to upgrade.
    expect(events).toEqual([
      { kind: 'written', rows: 2, ms: expect.any(Number) },
      { kind: 'written', rows: 4, ms: expect.any(Number) },
      { kind: 'committing', rows: 5 },
    ]);
  });

  it('makes a new store with 16 KiB pages and keeps the pages of one made before', async () => {
    const dataDir = mkdtempSync(join(scratch, 'pages-'));
    const control = SqliteControlStore.open(join(dataDir, 'control.db'), { accessSeconds: 60, refreshSeconds: 600 });
    const newPath = join(dataDir, 'new.db');
    const oldPath = join(dataDir, 'old.db');
    // A store from before the change: SQLite's default of 4 KiB, fixed at its first write.
    const made = new BetterSqlite3(oldPath);
    made.pragma('page_size = 4096');
    made.pragma('journal_mode = WAL');
    made.close();
    try {
      await recordRequests(control, newPath, [1, 2].map(requestRecord));
      await recordRequests(control, oldPath, [1, 2, 3].map(requestRecord));
    } finally {
      await control.close();
    }
    const pages = (path: string) => {
      const db = new BetterSqlite3(path, { readonly: true });
      try {
        return [db.pragma('page_size', { simple: true }), db.prepare('SELECT COUNT(*) FROM requests').pluck().get()];
      } finally {
        db.close();
      }
    };
    expect(pages(newPath)).toEqual([16_384, 2]);
    expect(pages(oldPath)).toEqual([4096, 3]);
  });

  it('names each migration it runs on a store of an earlier version before running it', async () => {
    const { dataDir, telemetryDbPath } = storeAtVersion5('import-upgrade-');
    const control = SqliteControlStore.open(join(dataDir, 'control.db'), { accessSeconds: 60, refreshSeconds: 600 });
    const events: ImportEvent[] = [];
    try {
      await recordRequests(control, telemetryDbPath, [requestRecord(1)], { report: (e) => events.push(e) });
    } finally {
      await control.close();
    }
    expect(events).toEqual([
      { kind: 'upgrading', migration: '006_minute_rollups.sql' },
      { kind: 'upgrading', migration: '007_spend_outbox.sql' },
      { kind: 'upgrading', migration: '008_dashboard_rollups.sql' },
      { kind: 'upgrading', migration: '009_cache_rollups.sql' },
      { kind: 'upgrading', migration: '010_health_rollups.sql' },
      { kind: 'upgrading', migration: '011_attempts.sql' },
      { kind: 'upgrading', migration: '012_api.sql' },
      { kind: 'upgrading', migration: '013_retention.sql' },
      { kind: 'upgrading', migration: '014_retention_terms.sql' },
      { kind: 'upgrading', migration: '015_coded_requests.sql' },
      { kind: 'upgrading', migration: '016_coded_search_terms.sql' },
      { kind: 'upgrading', migration: '017_compact_request_ids.sql' },
      { kind: 'upgrading', migration: '018_compact_timings.sql' },
      { kind: 'upgrading', migration: '019_metadata_shapes.sql' },
      { kind: 'upgrading', migration: '020_metadata_search_columns.sql' },
      { kind: 'upgrading', migration: '021_row_terms.sql' },
      { kind: 'upgrading', migration: '022_org_index.sql' },
      { kind: 'upgrading', migration: '023_fine_cells.sql' },
      { kind: 'upgrading', migration: '024_row_signatures.sql' },
      { kind: 'upgrading', migration: '025_row_chunks.sql' },
      { kind: 'upgrading', migration: '026_offset_columns.sql' },
      { kind: 'upgrading', migration: '027_cost_index_by_day.sql' },
      { kind: 'committing', rows: 1 },
    ]);
    const db = new BetterSqlite3(telemetryDbPath, { readonly: true });
    expect(db.prepare('SELECT SUM(requests) AS n FROM rollup_dim_1m WHERE dim = 0').get()).toEqual({ n: 1 });
    db.close();
  });
});
