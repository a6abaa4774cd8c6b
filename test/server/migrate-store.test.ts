import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { runAdmin } from '../../server/admin/commands.js';
import { PgControlStore } from '../../server/stores/control/postgres/store.js';
import { freshDatabase } from '../postgres/database.js';
import { recordRequests } from '../../server/ingest/record-requests.js';
import { openTelemetry } from '../../server/stores/telemetry/store.js';
import { PASSWORD, TestClient, register, startServer } from './harness.js';
import { variedRecord } from './request-rows.js';

/** `npm run admin -- migrate-store`: a SQLite data folder's control store, moved into PostgreSQL. */

const dataDir = mkdtempSync(join(tmpdir(), 'gc-migrate-store-'));
const drops: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const drop of drops) await drop();
  rmSync(dataDir, { recursive: true, force: true });
});

async function admin(...args: string[]): Promise<{ code: number; printed: string }> {
  const printed: string[] = [];
  const code = await runAdmin([...args, '--data-dir', dataDir], (line) => printed.push(line));
  return { code, printed: printed.join('\n') };
}

describe('migrate-store', () => {
  it('copies the request log too: the analytics answer the same, and no spend is counted twice', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'gc-migrate-telemetry-'));
    const run = async (...args: string[]) => {
      const printed: string[] = [];
      const code = await runAdmin([...args, '--data-dir', folder], (line) => printed.push(line));
      return { code, printed: printed.join('\n') };
    };
    try {
      // One clock for both servers: the windows read are the same instants.
      const now = Date.now();
      const sqlite = await startServer({ dataDir: folder, now: () => now });
      const { client, email, org } = await register(sqlite);
      const projectId = (await client.get('/projects')).body.projects[0].id as string;
      const key = (await client.post('/keys', { project_id: projectId, name: 'busy' })).body;
      const orgId = (await sqlite.app.control.organizations.findByName(org))!.id;
      const rows = Array.from({ length: 3_000 }, (_, i) => ({
        ...variedRecord(i, [key.id]),
        org_id: orgId,
        project_id: i % 3 === 0 ? null : projectId,
        ts: now - 1_000 - ((i * 7_919_000) % (20 * 86_400_000)),
      }));
      await recordRequests(sqlite.app.control, sqlite.config.telemetryDbPath, rows);
      // The minute and five-minute cells of the days before the last three go (fine-cells.ts): the
      // copy's reads stop where they did, or the week's old edge would count none of its rows.
      await sqlite.app.retention.sweep();
      const read = async (c: TestClient) => ({
        week: (await c.get('/analytics/summary?time_range=7d')).body,
        keys: (await c.get('/keys')).body,
        summary: (await c.get('/analytics/summary?time_range=30d')).body,
        log: (await c.get('/analytics/requests?time_range=30d&limit=20')).body,
        searched: (await c.get('/analytics/requests?time_range=30d&search=t-12')).body,
        dashboard: (await c.get('/analytics/dashboard?time_range=30d')).body,
      });
      const before = await read(client);
      expect(before.summary.total_requests).toBe(3_000);
      await sqlite.close();

      const database = await freshDatabase();
      drops.push(database.drop);
      const copied = await run('migrate-store', '--database-url', database.url, '--telemetry-url', database.url);
      expect(copied.code).toBe(0);
      expect(copied.printed).toMatch(/requests\s+3000 row\(s\), as many as the file/);
      // Into an empty database: the log held alone, its indexes built after the rows.
      expect(copied.printed).toMatch(/the request log is empty: the import holds it alone/);

      const moved = await startServer({
        dataDir: folder,
        databaseUrl: database.url,
        telemetryUrl: database.url,
        now: () => now,
      });
      try {
        const again = new TestClient(moved.baseUrl);
        expect((await again.post('/auth/login', { email, password: PASSWORD })).status).toBe(200);
        expect(await read(again)).toEqual(before);
      } finally {
        await moved.close();
      }
      // Never into a request log with rows: nothing is merged.
      const refused: string[] = [];
      const errors = vi.spyOn(console, 'error').mockImplementation((line: string) => void refused.push(line));
      try {
        expect(await run('migrate-store', '--telemetry-url', database.url)).toMatchObject({ code: 2 });
        // Nor a file whose outbox still owes its keys spend: it would be lost.
        const owing = openTelemetry(join(folder, 'telemetry.db'));
        owing.prepare("INSERT INTO spend_outbox (settlement, key_id, micro) VALUES ('s-1', ?, 5)").run(key.id);
        owing.close();
        const other = await freshDatabase();
        drops.push(other.drop);
        expect(await run('migrate-store', '--telemetry-url', other.url)).toMatchObject({ code: 2 });
      } finally {
        errors.mockRestore();
      }
      expect(refused.join('\n')).toMatch(/already holds a request log/);
      expect(refused.join('\n')).toMatch(/holds spend not yet settled/);
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
    // Two servers, a copy and its refusals: 9.5 and 12.8 s in two full suites on two cores.
  }, 60_000);

  it('copies every record, and a server on the database carries on where the file left off', async () => {
    const sqlite = await startServer({ dataDir });
    const { client, email } = await register(sqlite);
    const projectId = (await client.get('/projects')).body.projects[0].id;
    await client.post('/projects', { name: 'Second' });
    const key = (await client.post('/keys', { project_id: projectId, name: 'moved' })).body;
    await client
      .post('/keys', { project_id: projectId, name: 'revoked' })
      .then((a) => client.delete(`/keys/${a.body.id}`));
    expect(
      (await client.post('/vault/keys', { provider: 'openai', api_key: 'sk-proj-moved-1234567890WXYZ' })).status,
    ).toBe(200);
    const before = {
      keys: (await client.get('/keys')).body,
      projects: (await client.get('/projects')).body,
      vault: (await client.get('/vault/keys')).body,
      activity: (await client.get('/activity')).body,
    };
    await sqlite.close();

    const database = await freshDatabase();
    drops.push(database.drop);
    const copied = await admin('migrate-store', '--database-url', database.url);
    expect(copied.code).toBe(0);
    expect(copied.printed).toMatch(/api_keys\s+2 row\(s\), as many as the file/);
    expect(copied.printed).toMatch(/activity\s+\d+ row\(s\), as many as the file/);

    const moved = await startServer({ dataDir, databaseUrl: database.url });
    try {
      const again = new TestClient(moved.baseUrl);
      expect((await again.post('/auth/login', { email, password: PASSWORD })).status).toBe(200);
      const after = {
        keys: (await again.get('/keys')).body,
        projects: (await again.get('/projects')).body,
        vault: (await again.get('/vault/keys')).body,
        activity: (await again.get('/activity')).body,
      };
      // The sign-in just now is the one event the file did not have.
      expect(after.activity.events.slice(1)).toEqual(before.activity.events);
      expect({ ...after, activity: null }).toEqual({ ...before, activity: null });
      // The key's hash and the vault's sealed bytes came across whole: the gateway's side opens both.
      expect(await moved.app.admissions.keyModels(key.api_key)).toMatchObject({ kind: 'known', key: { id: key.id } });
      const trail = await admin('verify-activity', '--database-url', database.url);
      expect(trail).toMatchObject({ code: 0, printed: expect.stringMatching(/every chain holds/) });
      // New rows go on from the copied ones: a key made now lists first.
      const newer = (await again.post('/keys', { project_id: projectId, name: 'after the move' })).body;
      expect((await again.get('/keys')).body.keys[0].id).toBe(newer.id);
    } finally {
      await moved.close();
    }

    // Never into a database that already holds a control store: nothing is merged.
    expect(await admin('migrate-store', '--database-url', database.url)).toMatchObject({ code: 2 });
  });

  it('needs --database-url, a data folder with a control store, and a database without one', async () => {
    expect(await admin('migrate-store')).toMatchObject({ code: 2 });
    // A database a server was started on by mistake holds rows even without an organisation.
    const used = await freshDatabase();
    drops.push(used.drop);
    const store = await PgControlStore.open(used.url, { accessSeconds: 60, refreshSeconds: 60 });
    await store.write((tx) => tx.settlements.mark('left-behind', Date.now()));
    await store.close();
    const refused: string[] = [];
    const errors = vi.spyOn(console, 'error').mockImplementation((line: string) => void refused.push(line));
    try {
      expect(await admin('migrate-store', '--database-url', used.url)).toMatchObject({ code: 2 });
    } finally {
      errors.mockRestore();
    }
    expect(refused.join('\n')).toMatch(/already holds a control store \(settled_spend has rows\)/);
    const empty = mkdtempSync(join(tmpdir(), 'gc-migrate-empty-'));
    try {
      const database = await freshDatabase();
      drops.push(database.drop);
      const printed: string[] = [];
      expect(
        await runAdmin(['migrate-store', '--data-dir', empty, '--database-url', database.url], (l) => printed.push(l)),
      ).toBe(2);
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });
});
