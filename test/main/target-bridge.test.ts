import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConsoleHost, type EmbeddedServerControl } from '../../main/core/host.js';
import { ownerOnlyFile, ProfileStore } from '../../main/core/profiles.js';
import { recordRequests } from '../../server/ingest/record-requests.js';
import { PASSWORD, register, requestLog, startServer, type TestServer } from '../server/harness.js';
import { requestRecord } from '../server/request-rows.js';

/** The analytics' `target` across the bridge: carried to the control plane, checked like the other filters. */

const NOW = Date.UTC(2026, 10, 4, 10, 7, 33, 123);
const TARGET = 'openrouter/openai/gpt-4o-mini';

const noEmbedded: EmbeddedServerControl = {
  start: () => Promise.reject(new Error('embedded server not expected')),
  restart: () => Promise.reject(new Error('embedded server not expected')),
  status: () => ({ state: 'stopped', baseUrl: null, lastLog: [], demoAccount: null }),
  demoCredentials: () => null,
};

let server: TestServer;
let folder: string;
beforeAll(async () => {
  server = await startServer({ now: () => NOW });
  folder = mkdtempSync(join(tmpdir(), 'gc-console-target-'));
});
afterAll(async () => {
  await server.close();
  rmSync(folder, { recursive: true, force: true });
});

describe('target across the bridge', () => {
  it('narrows the summary and health it asks for, and a malformed one comes back as the server refused it', async () => {
    const host = new ConsoleHost({
      shell: 'web',
      version: 'test',
      profiles: new ProfileStore(folder, ownerOnlyFile),
      embedded: noEmbedded,
    });
    const account = await register(server);
    const orgId = (await server.app.control.organizations.findByName(account.org))!.id;
    // Six requests of the last hour: three served by TARGET, two by another target, one by none.
    const served = [TARGET, TARGET, TARGET, 'openai/gpt-4o-mini-2024-07-18', 'openai/gpt-4o-mini-2024-07-18', null];
    const rows = served.map((target, i) => ({
      ...requestRecord(i),
      req_id: `req-bridge-${process.pid}-${i}`,
      org_id: orgId,
      ts: NOW - (i + 1) * 60_000,
      served_by: target,
      termination_reason: 'success',
    }));
    await recordRequests(server.app.control, requestLog(server), rows);
    const added = await host.dispatch('profiles.add', { name: 'Remote', kind: 'remote', baseUrl: server.baseUrl });
    if (!added.ok) throw new Error(added.error.message);
    const profileId = (added.result as { id: string }).id;
    expect((await host.dispatch('session.signIn', { profileId, email: account.email, password: PASSWORD })).ok).toBe(
      true,
    );

    const summary = await host.dispatch('api.summary', { profileId, query: { time_range: '1h', target: TARGET } });
    expect(summary).toMatchObject({ ok: true, result: { total_requests: 3 } });
    const health = await host.dispatch('api.health', { profileId, query: { window: '1h', target: TARGET } });
    expect(health).toMatchObject({ ok: true, result: { providers: [{ requests: 3 }] } });

    // The host's own check: a target is text, as the other filters are.
    const notText = await host.dispatch('api.summary', { profileId, query: { target: 42 } });
    expect(!notText.ok && notText.error.status).toBe(422);
    // The server's: text that names no target.
    const malformed = await host.dispatch('api.health', { profileId, query: { target: 'gpt-4o' } });
    expect(!malformed.ok && malformed.error).toMatchObject({ status: 400, field: 'target' });
  });
});
