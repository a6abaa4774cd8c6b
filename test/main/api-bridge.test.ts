import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConsoleHost, type EmbeddedServerControl } from '../../main/core/host.js';
import { ownerOnlyFile, ProfileStore } from '../../main/core/profiles.js';
import { recordRequests } from '../../server/ingest/record-requests.js';
import type { RequestApi } from '../../server/schemas/request-log.js';
import { PASSWORD, register, requestLog, startServer, type TestServer } from '../server/harness.js';
import { requestRecord } from '../server/request-rows.js';

/**
 * The request log's `api` across the bridge: carried to the control plane on the log, the
 * analytics and health, and as the chart's grouping; checked like the other filters.
 */

const NOW = Date.UTC(2026, 10, 4, 10, 7, 33, 123);

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
  folder = mkdtempSync(join(tmpdir(), 'gc-console-api-'));
});
afterAll(async () => {
  await server.close();
  rmSync(folder, { recursive: true, force: true });
});

describe('api across the bridge', () => {
  it('narrows the log, the summary and health it asks for, groups the chart by it, and a bad one comes back as refused', async () => {
    const host = new ConsoleHost({
      shell: 'web',
      version: 'test',
      profiles: new ProfileStore(folder, ownerOnlyFile),
      embedded: noEmbedded,
    });
    const account = await register(server);
    const orgId = (await server.app.control.organizations.findByName(account.org))!.id;
    // Six requests of the last hour: three on Messages, two on chat completions, one of an unknown API.
    const apis: (RequestApi | null)[] = ['messages', 'messages', 'messages', 'chat', 'chat', null];
    const rows = apis.map((api, i) => ({
      ...requestRecord(i),
      req_id: `req-api-bridge-${process.pid}-${i}`,
      org_id: orgId,
      ts: NOW - (i + 1) * 60_000,
      api,
      termination_reason: 'success',
    }));
    await recordRequests(server.app.control, requestLog(server), rows);
    const added = await host.dispatch('profiles.add', { name: 'Remote', kind: 'remote', baseUrl: server.baseUrl });
    if (!added.ok) throw new Error(added.error.message);
    const profileId = (added.result as { id: string }).id;
    expect((await host.dispatch('session.signIn', { profileId, email: account.email, password: PASSWORD })).ok).toBe(
      true,
    );

    const page = await host.dispatch('api.requests', { profileId, query: { time_range: '1h', api: 'messages' } });
    expect(page).toMatchObject({ ok: true, result: { total: 3 } });
    const listed = (page as { result: { requests: { api: string | null }[] } }).result.requests;
    expect(listed.map((row) => row.api)).toEqual(['messages', 'messages', 'messages']);
    const summary = await host.dispatch('api.summary', { profileId, query: { time_range: '1h', api: 'chat' } });
    expect(summary).toMatchObject({ ok: true, result: { total_requests: 2 } });
    const health = await host.dispatch('api.health', { profileId, query: { window: '1h', api: 'messages' } });
    expect(health).toMatchObject({ ok: true, result: { providers: [{ requests: 3 }] } });
    const series = await host.dispatch('api.timeseries', {
      profileId,
      query: { time_range: '1h', interval: '1h', group_by: 'api' },
    });
    expect(series.ok).toBe(true);
    const points = (series as { result: { data: { group: string | null; value: number }[] } }).result.data;
    const byApi = new Map<string | null, number>();
    for (const point of points) byApi.set(point.group, (byApi.get(point.group) ?? 0) + point.value);
    expect(byApi).toEqual(
      new Map<string | null, number>([
        ['messages', 3],
        ['chat', 2],
        [null, 1],
      ]),
    );

    // The host's own check: an API is text, as the other filters are.
    const notText = await host.dispatch('api.requests', { profileId, query: { api: 7 } });
    expect(!notText.ok && notText.error.status).toBe(422);
    // The server's: text that names no API of the gateway's.
    const unknown = await host.dispatch('api.summary', { profileId, query: { api: 'graphql' } });
    expect(!unknown.ok && unknown.error).toMatchObject({ status: 400, field: 'api' });
  });
});
