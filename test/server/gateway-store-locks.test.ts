import Database from 'better-sqlite3';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { admitDirectly, spentCents } from './gateway-harness.js';
import { register, startServer, type TestClient, type TestServer } from './harness.js';
import { requestRecord } from './request-rows.js';

/**
 * The gateway's admissions beside the SQLite stores' locks: another writer holding the telemetry
 * store or the control file, and what the control plane counts meanwhile. SQLite's alone (a
 * PostgreSQL control store has no file another process locks).
 */

let server: TestServer;
let owner: { client: TestClient };
let projectId: string;

const FLUSH_MS = 50;

beforeAll(async () => {
  server = await startServer({ gatewayFlushMs: FLUSH_MS });
  owner = await register(server);
  projectId = (await owner.client.get('/projects')).body.projects[0].id;
});
afterAll(() => server.close());

async function newKey(fields: Record<string, unknown> = {}): Promise<{ id: string; api_key: string }> {
  const answer = await owner.client.post('/keys', { project_id: projectId, name: `k${Math.random()}`, ...fields });
  expect(answer.status, JSON.stringify(answer.body)).toBe(201);
  return answer.body;
}

describe("admissions beside the SQLite stores' locks", () => {
  it('counts a settled row against the credit limit in the very turn its hold ends', async () => {
    const key = await newKey({ credit_limit_cents: 1 });
    const { admissions } = server.app;
    const admit = (reqId: string) => admitDirectly(server, key.api_key, reqId);
    const first = await admit('req_settle_first');
    expect(first.kind).toBe('admitted');
    if (first.kind !== 'admitted') return;
    // Retention's sweep at the start thins fine cells on the writing thread: over first, so that
    // the thread takes the rows at once (else they waited for the turn below to end, untested).
    await server.app.retention.sweep();
    // The rows wait on another writer's lock, so that the store can be read before they commit.
    const importer = new Database(server.config.telemetryDbPath);
    const beside = new Database(join(server.dataDir, 'control.db'), { readonly: true });
    importer.exec('BEGIN IMMEDIATE');
    try {
      admissions.record([
        {
          ...requestRecord(0),
          req_id: 'req_settle_first',
          ts: Date.now(),
          org_id: first.key.org_id,
          project_id: first.key.project_id,
          key_id: key.id,
          // The whole limit, 1 cent: nothing more may be admitted once it is spent.
          cost_micro: 10_000,
        },
      ]);
      const written = admissions.written();
      await new Promise((resolve) => setTimeout(resolve, 3 * FLUSH_MS)); // the thread waits on the lock
      // In one turn: the key read (as any request would), the lock let go, and the thread's
      // commit of the spend awaited. The rows written are heard in the next turn, before the
      // store's commits are read again.
      const spent = beside.prepare<[string], number>('SELECT spent_micro FROM api_keys WHERE id = ?').pluck();
      let keyRead: Promise<unknown> = Promise.resolve();
      let spentInTurn = 0;
      await new Promise<void>((resolve) =>
        setImmediate(() => {
          // The read runs up to the store now; its answer is awaited after the turn.
          keyRead = admissions.keyModels(key.api_key);
          importer.exec('COMMIT');
          const pause = new Int32Array(new SharedArrayBuffer(4));
          for (let waited = 0; spent.get(key.id) === 0 && waited < 10_000; waited += 10) Atomics.wait(pause, 0, 0, 10);
          spentInTurn = spent.get(key.id)!;
          // And for the outbox's clearing after it, before the thread says the rows are written.
          Atomics.wait(pause, 0, 0, 300);
          resolve();
        }),
      );
      // The thread committed the spend while this turn held the hold: the case under test.
      expect(spentInTurn).toBe(10_000);
      await keyRead;
      await written;
      expect(await admit('req_settle_second')).toMatchObject({ kind: 'refused', refusal: { status: 402 } });
    } finally {
      if (importer.inTransaction) importer.exec('ROLLBACK');
      importer.close();
      beside.close();
    }
  });

  it('keeps holding a row’s cost while its spend waits in the outbox (the control store busy), until it settles', async () => {
    const key = await newKey({ credit_limit_cents: 1 });
    const { admissions } = server.app;
    const admit = (reqId: string) => admitDirectly(server, key.api_key, reqId);
    const first = await admit('req_owed_first');
    expect(first.kind).toBe('admitted');
    if (first.kind !== 'admitted') return;
    const row = (reqId: string, costMicro: number) => ({
      ...requestRecord(0),
      req_id: reqId,
      ts: Date.now(),
      org_id: first.key.org_id,
      project_id: first.key.project_id,
      key_id: key.id,
      cost_micro: costMicro,
    });
    // Another writer holds the control store past the writing thread's patience: the rows commit,
    // their spend stays in the outbox.
    const blocker = new Database(join(server.dataDir, 'control.db'));
    blocker.exec('BEGIN IMMEDIATE');
    try {
      admissions.record([row('req_owed_first', 10_000)]); // the whole limit
      await admissions.written();
      expect(await spentCents(owner.client, key.id)).toBe(0);
      expect(await admit('req_owed_refused')).toMatchObject({ kind: 'refused', refusal: { status: 402 } });
    } finally {
      blocker.exec('ROLLBACK');
      blocker.close();
    }
    // The next commit settles the outbox: the spend is the key's now, and still refuses.
    admissions.record([row('req_owed_later', 0)]);
    await admissions.written();
    expect(await spentCents(owner.client, key.id)).toBe(10_000);
    expect(await admit('req_owed_after')).toMatchObject({ kind: 'refused', refusal: { status: 402 } });
  });
});
