import BetterSqlite3 from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { RequestRecorder } from '../../server/ingest/record-requests.js';
import type { ControlStore } from '../../server/stores/control/store.js';
import { register, startServer, type TestServer } from './harness.js';
import { requestRecord } from './request-rows.js';

const servers: TestServer[] = [];
const recorders: RequestRecorder[] = [];
afterEach(async () => {
  for (const recorder of recorders.splice(0)) recorder.close();
  for (const server of servers.splice(0)) await server.close();
});

/** A server with one key, and a recorder of rows into its store; each row costs 1,000 micro-PKR. */
async function withRecorder() {
  const server = await startServer();
  servers.push(server);
  const owner = await register(server);
  const projectId = (await owner.client.get('/projects')).body.projects[0].id as string;
  const keyId = (await owner.client.post('/keys', { project_id: projectId, name: 'live' })).body.id as string;
  const orgId = (await server.app.control.keys.find(keyId))!.org_id;
  const recorder = new RequestRecorder(server.config.telemetryDbPath);
  recorders.push(recorder);
  const rows = (from: number, models: string[]) =>
    models.map((model, i) => ({
      ...requestRecord(from + i),
      req_id: `req-live-${from + i}`,
      ts: Date.now() - 1000,
      org_id: orgId,
      project_id: projectId,
      key_id: keyId,
      model,
    }));
  return { server, control: server.app.control, keyId, recorder, rows };
}

/** Each stored row's model, by request id, as the request log reads it. */
function storedModels(path: string): Record<string, string> {
  const db = new BetterSqlite3(path, { readonly: true });
  try {
    const rows = db.prepare('SELECT req_id, model FROM requests').all() as { req_id: string; model: string }[];
    return Object.fromEntries(rows.map((row) => [row.req_id, row.model]));
  } finally {
    db.close();
  }
}

/** Runs `sql` on the store from a connection of its own, as another program could. */
function onStore(path: string, sql: string): void {
  const db = new BetterSqlite3(path);
  try {
    db.exec(sql);
  } finally {
    db.close();
  }
}

const spent = async (control: ControlStore, keyId: string) => (await control.keys.find(keyId))!.spent_micro;

describe('the gateways’ rows written batch after batch', () => {
  it('writes every batch whole, batch after batch, with strings new in each', async () => {
    const { server, control, keyId, recorder, rows } = await withRecorder();
    expect(await recorder.record(control, rows(0, ['vendor/a', 'vendor/b']))).toBe(2);
    expect(await recorder.record(control, rows(2, ['vendor/c', 'vendor/a']))).toBe(2);
    expect(await recorder.record(control, rows(4, ['vendor/d']))).toBe(1);
    expect(storedModels(server.config.telemetryDbPath)).toEqual({
      'req-live-0': 'vendor/a',
      'req-live-1': 'vendor/b',
      'req-live-2': 'vendor/c',
      'req-live-3': 'vendor/a',
      'req-live-4': 'vendor/d',
    });
    expect(await spent(control, keyId)).toBe(5_000);
  });

  it('takes nothing from a batch that fails, and codes the strings it made anew in the next', async () => {
    const { server, control, keyId, recorder, rows } = await withRecorder();
    const path = server.config.telemetryDbPath;
    await recorder.record(control, rows(0, ['vendor/a']));
    // The store refuses rows for a while: the batch's new string is made, then rolled back with it.
    onStore(path, `CREATE TRIGGER refuse BEFORE INSERT ON request_rows BEGIN SELECT RAISE(ABORT, 'refused'); END`);
    await expect(recorder.record(control, rows(1, ['vendor/failed']))).rejects.toThrow('refused');
    onStore(path, 'DROP TRIGGER refuse');
    // The string made first now takes the code the rolled-back one had; the other is made again.
    expect(await recorder.record(control, rows(2, ['vendor/next', 'vendor/failed']))).toBe(2);
    expect(storedModels(path)).toEqual({
      'req-live-0': 'vendor/a',
      'req-live-2': 'vendor/next',
      'req-live-3': 'vendor/failed',
    });
    expect(await spent(control, keyId)).toBe(3_000);
  });
});
