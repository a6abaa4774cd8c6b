import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordRequests } from '../../server/ingest/record-requests.js';
import type { RequestRecord } from '../../server/stores/telemetry/request-record.js';
import { register, registerOrg, startServer, type TestServer, requestLog } from './harness.js';
import { requestRecord } from './request-rows.js';

// Mid-hour and mid-minute, so each window is read from cells in its middle and rows at its edges.
const NOW = Date.UTC(2026, 10, 22, 7, 49, 19, 123);
const MINUTE = 60_000;
const HOUR = 3_600_000;
const DAY = 86_400_000;

let server: TestServer;
beforeAll(async () => {
  server = await startServer({ now: () => NOW });
});
afterAll(() => server.close());

type Org = Awaited<ReturnType<typeof registerOrg>>;

async function keyOf(org: Org, name = 'impact key'): Promise<string> {
  const answer = await org.client.post('/keys', { project_id: org.projectId, name });
  expect(answer.status, JSON.stringify(answer.body)).toBe(201);
  return answer.body.id;
}

function row(org: Org, keyId: string, ts: number, userAgent: string, metadata: Record<string, string>): RequestRecord {
  return {
    ...requestRecord(0),
    req_id: `req-${randomUUID()}`,
    ts,
    org_id: org.orgId,
    project_id: org.projectId,
    key_id: keyId,
    user_agent: userAgent,
    metadata: JSON.stringify(metadata),
  };
}

const times = (n: number, make: (i: number) => RequestRecord) => Array.from({ length: n }, (_, i) => make(i));

describe('GET /keys/{id}/impact', () => {
  let org: Org;
  let keyId: string;
  let quietKeyId: string;
  beforeAll(async () => {
    org = await registerOrg(server);
    keyId = await keyOf(org);
    quietKeyId = await keyOf(org, 'quiet');
    const other = await keyOf(org, 'other');
    await recordRequests(server.app.control, requestLog(server), [
      // The last five minutes: 3, the newest 20 s ago.
      ...times(3, (i) => row(org, keyId, NOW - 20_000 - i * MINUTE, 'OpenAI/Python 1.57.0', { customer: 'acme' })),
      // Earlier today: 2 more in 24 hours, 2 hours ago (tagged by another customer) and just inside the day.
      row(org, keyId, NOW - 2 * HOUR, 'curl/8.5.0', { customer: 'bluefin', feature: 'search' }),
      row(org, keyId, NOW - DAY + 1_000, 'curl/8.5.0', {}),
      // Days ago: 4 more in 7 days.
      ...times(4, (i) => row(org, keyId, NOW - 3 * DAY - i * HOUR, 'OpenAI/Python 1.57.0', { feature: 'chat' })),
      // Outside every window: counted nowhere, not a caller of the last 7 days.
      row(org, keyId, NOW - 8 * DAY, 'ancient-client/0.1', { customer: 'gone' }),
      // Another key's requests are not this key's.
      ...times(5, () => row(org, other, NOW - MINUTE, 'someone-else/1.0', { customer: 'acme' })),
    ]);
  });

  it("answers the key's requests by window, its last use and its callers over the last 7 days", async () => {
    const answer = await org.client.get(`/keys/${keyId}/impact`);
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    const key = (await org.client.get('/keys')).body.keys.find((k: { id: string }) => k.id === keyId);
    expect(answer.body).toEqual({
      id: keyId,
      key_prefix: key.key_prefix,
      as_of: new Date(NOW).toISOString(),
      requests_last_5m: 3,
      requests_last_24h: 5,
      requests_last_7d: 9,
      last_used_at: new Date(NOW - 20_000).toISOString(),
      callers: {
        window: '7d',
        requests_read: 9,
        sample_limit: 10_000,
        complete: true,
        distinct_user_agents: 2,
        distinct_metadata_keys: 2,
        user_agents: [
          { name: 'OpenAI/Python 1.57.0', requests: 7 },
          { name: 'curl/8.5.0', requests: 2 },
        ],
        metadata: [
          {
            key: 'feature',
            requests: 5,
            distinct_values: 2,
            values: [
              { name: 'chat', requests: 4 },
              { name: 'search', requests: 1 },
            ],
          },
          {
            key: 'customer',
            requests: 4,
            distinct_values: 2,
            values: [
              { name: 'acme', requests: 3 },
              { name: 'bluefin', requests: 1 },
            ],
          },
        ],
      },
    });
    // The same last use as the key list shows.
    expect(key.last_used_at).toBe(answer.body.last_used_at);
  });

  it('answers zeros and a null last use for a key nobody has called', async () => {
    const answer = await org.client.get(`/keys/${quietKeyId}/impact`);
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({
      requests_last_5m: 0,
      requests_last_24h: 0,
      requests_last_7d: 0,
      last_used_at: null,
      callers: { requests_read: 0, complete: true, user_agents: [], metadata: [] },
    });
  });

  it("answers 404 for another organisation's key, an unknown or malformed id, and a revoked key", async () => {
    const stranger = await register(server);
    for (const [client, id] of [
      [stranger.client, keyId],
      [org.client, randomUUID()],
      [org.client, 'not-a-uuid'],
    ] as const) {
      const answer = await client.get(`/keys/${id}/impact`);
      expect(answer.status, id).toBe(404);
      expect(answer.body).toEqual({ error: 'key not found' });
    }
    const doomed = await keyOf(org, 'doomed');
    expect((await org.client.delete(`/keys/${doomed}`)).status).toBe(200);
    expect((await org.client.get(`/keys/${doomed}/impact`)).status).toBe(404);
  });

  it('counts a request exactly at each window’s edge in, one millisecond older out, and one stamped ahead of now in', async () => {
    const edgeKey = await keyOf(org, 'edges');
    const floor = (t: number, grain: number) => t - (t % grain);
    const dayStart = floor(NOW - 7 * DAY, DAY) + DAY;
    const at = [
      // The last 5 minutes (7): now, a gateway clock 30 s ahead, the window's first millisecond,
      // and both sides of the minute and 5-minute cells at its end.
      NOW,
      NOW + 30_000,
      NOW - 5 * MINUTE,
      floor(NOW, MINUTE),
      floor(NOW, MINUTE) - 1,
      floor(NOW, 5 * MINUTE),
      floor(NOW, 5 * MINUTE) - 1,
      // The last 24 hours (10 more): one millisecond before the 5 minutes, both sides of the hour and
      // day boundaries, the window's first millisecond and both sides of the first minute and hour cells.
      NOW - 5 * MINUTE - 1,
      floor(NOW, HOUR),
      floor(NOW, HOUR) - 1,
      floor(NOW, DAY),
      floor(NOW, DAY) - 1,
      NOW - DAY,
      floor(NOW - DAY, MINUTE) + MINUTE,
      floor(NOW - DAY, MINUTE) + MINUTE - 1,
      floor(NOW - DAY, HOUR) + HOUR,
      floor(NOW - DAY, HOUR) + HOUR - 1,
      // The last 7 days (4 more): one millisecond before the day, the window's first millisecond and
      // both sides of its first day cell; one millisecond older is in no window.
      NOW - DAY - 1,
      NOW - 7 * DAY,
      dayStart,
      dayStart - 1,
      NOW - 7 * DAY - 1,
    ];
    await recordRequests(
      server.app.control,
      requestLog(server),
      at.map((ts) => row(org, edgeKey, ts, 'edge-client/1.0', {})),
    );
    const answer = await org.client.get(`/keys/${edgeKey}/impact`);
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({
      requests_last_5m: 7,
      requests_last_24h: 17,
      requests_last_7d: 21,
      // The newest request, even ahead of now, and counted above: never "used now" beside no requests.
      last_used_at: new Date(NOW + 30_000).toISOString(),
      callers: { requests_read: 21, complete: true, user_agents: [{ name: 'edge-client/1.0', requests: 21 }] },
    });
  });

  it('answers 401 without a session', async () => {
    const anonymous = await fetch(`${server.baseUrl}/keys/${keyId}/impact`);
    expect(anonymous.status).toBe(401);
  });

  it('reads at most the sample of newest requests for the callers, and says the counts are not exact', async () => {
    const query = {
      kind: 'impact' as const,
      orgId: org.orgId,
      keyId,
      now: NOW,
      windowsMs: [7 * DAY],
      callersWindowMs: 7 * DAY,
      sampleRows: 4,
      topCallers: 1,
      topValues: 1,
    };
    const result = await server.app.analytics.run(query);
    // The counts stay exact; the callers are those of the 4 newest requests, the top one of each,
    // with how many there were in all.
    expect(result.requests).toEqual([9]);
    expect(result.sampled).toBe(4);
    expect(result.complete).toBe(false);
    expect(result.userAgents).toEqual([{ name: 'OpenAI/Python 1.57.0', requests: 3 }]);
    expect(result.distinctUserAgents).toBe(2);
    expect(result.metadata).toEqual([
      { key: 'customer', requests: 4, distinctValues: 2, values: [{ name: 'acme', requests: 3 }] },
    ]);
    expect(result.distinctMetadataKeys).toBe(2);

    // A sample exactly as large as the window's requests is the whole window.
    const whole = await server.app.analytics.run({ ...query, sampleRows: 9 });
    expect([whole.sampled, whole.complete]).toEqual([9, true]);
    const short = await server.app.analytics.run({ ...query, sampleRows: 8 });
    expect([short.sampled, short.complete]).toEqual([8, false]);
  });
});

describe('GET /keys/{id}/impact while the telemetry store cannot be opened', () => {
  const scratch = mkdtempSync(join(tmpdir(), 'gc-key-impact-'));
  let down: TestServer;
  beforeAll(async () => {
    down = await startServer({ now: () => NOW, telemetryDbPath: join(scratch, 'missing', 'telemetry.db') });
  });
  afterAll(async () => {
    await down.close();
    rmSync(scratch, { recursive: true, force: true });
  });

  it('still answers, with every telemetry figure unknown (null), never 0', async () => {
    const org = await registerOrg(down);
    const keyId = await keyOf(org);
    const answer = await org.client.get(`/keys/${keyId}/impact`);
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({
      id: keyId,
      requests_last_5m: null,
      requests_last_24h: null,
      requests_last_7d: null,
      last_used_at: null,
      callers: null,
    });
  });
});
