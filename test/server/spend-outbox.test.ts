import BetterSqlite3 from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { buildApp } from '../../server/app.js';
import { recordRequests, type ImportEvent } from '../../server/ingest/record-requests.js';
import { settleOutstandingSpend, settleSpend, sqliteOutbox } from '../../server/ingest/spend-outbox.js';
import type { ControlStore, SqliteControlStore } from '../../server/stores/control/store.js';
import { openTelemetry } from '../../server/stores/telemetry/store.js';
import { register, startServer, type TestServer } from './harness.js';
import { requestRecord } from './request-rows.js';

const servers: TestServer[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close();
});

/** A server with one key; rows of that key cost 1,000 micro-PKR each. */
async function withKey(): Promise<{ server: TestServer; keyId: string; orgId: string; projectId: string }> {
  const server = await startServer();
  servers.push(server);
  const owner = await register(server);
  const projectId = (await owner.client.get('/projects')).body.projects[0].id as string;
  const keyId = (await owner.client.post('/keys', { project_id: projectId, name: 'billed' })).body.id as string;
  const orgId = (await server.app.control.keys.find(keyId))!.org_id;
  return { server, keyId, orgId, projectId };
}

const rowsFor = (keyId: string, orgId: string, projectId: string, from: number, count: number) =>
  Array.from({ length: count }, (_, i) => ({
    ...requestRecord(from + i),
    req_id: `req-${keyId}-${from + i}`,
    ts: Date.now() - 1000,
    org_id: orgId,
    project_id: projectId,
    key_id: keyId,
  }));

const spent = async (control: ControlStore, keyId: string) => (await control.keys.find(keyId))!.spent_micro;

function outboxOf(server: TestServer): number {
  const db = new BetterSqlite3(server.config.telemetryDbPath, { readonly: true });
  try {
    return (db.prepare('SELECT COUNT(*) AS n FROM spend_outbox').get() as { n: number }).n;
  } finally {
    db.close();
  }
}

describe('spend and rows through a crash between the two stores', () => {
  it('keeps the spend of rows committed just before a crash, and settles it once at the next start', async () => {
    const { server, keyId, orgId, projectId } = await withKey();
    const control = server.app.control;
    await recordRequests(control, server.config.telemetryDbPath, rowsFor(keyId, orgId, projectId, 0, 3));
    expect(await spent(control, keyId)).toBe(3_000);

    // After the telemetry commit the control store takes no write (busy, or the process dying):
    // the rows stay committed, and the import says their spend waits.
    const write = control.write.bind(control);
    control.write = () => Promise.reject(new Error('database is locked'));
    const events: ImportEvent[] = [];
    await recordRequests(control, server.config.telemetryDbPath, rowsFor(keyId, orgId, projectId, 3, 2), {
      report: (event) => events.push(event),
    });
    control.write = write;
    expect(events.at(-1)).toEqual({ kind: 'unsettled', message: 'database is locked' });
    expect(await spent(control, keyId)).toBe(3_000);
    expect(outboxOf(server)).toBe(1);

    // Restarted on the same folder: settled once, and once only however often it starts.
    for (let start = 0; start < 2; start++) {
      const app = await buildApp(server.config);
      try {
        expect(await spent(app.control, keyId)).toBe(5_000);
      } finally {
        await app.close();
      }
    }
    expect(outboxOf(server)).toBe(0);
  });

  it('does not add the spend twice when the crash came after the control commit, before the outbox forgot it', async () => {
    const { server, keyId, orgId, projectId } = await withKey();
    const control = server.app.control;
    const telemetry = openTelemetry(server.config.telemetryDbPath);
    try {
      // An entry settled, its mark made, and the process gone before the outbox's delete.
      telemetry.prepare("INSERT INTO spend_outbox (settlement, key_id, micro) VALUES ('s-1', ?, 700)").run(keyId);
      await control.write(async (tx) => {
        await tx.keys.settle(keyId, 700);
        await tx.settlements.mark('s-1', Date.now());
      });
      expect(await settleOutstandingSpend(control, sqliteOutbox(telemetry))).toBe(1);
      expect(await spent(control, keyId)).toBe(700);
      expect(outboxOf(server)).toBe(0);
      // And the next commit settles its own spend as before.
      await recordRequests(control, server.config.telemetryDbPath, rowsFor(keyId, orgId, projectId, 0, 1));
      expect(await spent(control, keyId)).toBe(1_700);
    } finally {
      telemetry.close();
    }
  });

  it('settles one entry once when two writers settle it', async () => {
    const { server, keyId } = await withKey();
    const control = server.app.control;
    const first = openTelemetry(server.config.telemetryDbPath);
    const second = openTelemetry(server.config.telemetryDbPath);
    try {
      first.prepare("INSERT INTO spend_outbox (settlement, key_id, micro) VALUES ('s-2', ?, 250)").run(keyId);
      await settleSpend(control, sqliteOutbox(second), 's-2');
      await settleSpend(control, sqliteOutbox(first), 's-2');
      expect(await spent(control, keyId)).toBe(250);
    } finally {
      first.close();
      second.close();
    }
  });

  it('keeps no mark once the outbox has forgotten the entry, so the marks do not pile up', async () => {
    const { server, keyId, orgId, projectId } = await withKey();
    const control = server.app.control;
    for (let i = 0; i < 3; i++) {
      await recordRequests(control, server.config.telemetryDbPath, rowsFor(keyId, orgId, projectId, i, 1));
    }
    expect(await spent(control, keyId)).toBe(3_000);
    expect((control as SqliteControlStore).db.prepare('SELECT COUNT(*) AS n FROM settled_spend').get()).toEqual({
      n: 0,
    });
    expect(outboxOf(server)).toBe(0);
    // Rows that cost nothing (refusals) take no control transaction at all (each is an fsync).
    const write = control.write.bind(control);
    let writes = 0;
    control.write = (work) => {
      writes++;
      return write(work);
    };
    const free = rowsFor(keyId, orgId, projectId, 10, 2).map((row) => ({ ...row, cost_micro: 0 }));
    await recordRequests(control, server.config.telemetryDbPath, free);
    control.write = write;
    expect(writes).toBe(0);
  });
});
