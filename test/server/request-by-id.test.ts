import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordRequests } from '../../server/ingest/record-requests.js';
import type { RequestRecord } from '../../server/stores/telemetry/request-record.js';
import { registerOrg, startServer, type TestServer, requestLog } from './harness.js';
import { requestRecord } from './request-rows.js';

const NOW = Date.UTC(2026, 10, 22, 7, 49, 19, 123);
const DAY = 86_400_000;

let server: TestServer;
beforeAll(async () => {
  server = await startServer({ now: () => NOW });
});
afterAll(() => server.close());

type Org = Awaited<ReturnType<typeof registerOrg>>;

function row(org: Org, reqId: string, ts: number, metadata: Record<string, string> = {}): RequestRecord {
  return {
    ...requestRecord(0),
    req_id: reqId,
    ts,
    org_id: org.orgId,
    project_id: org.projectId,
    cost_micro: 1_500_000,
    termination_reason: 'success',
    metadata: JSON.stringify(metadata),
  };
}

describe('GET /analytics/requests/{req_id}', () => {
  const wanted = 'req_0190aaaa0000000000000000000000ff';
  let org: Org;
  let stranger: Org;
  beforeAll(async () => {
    org = await registerOrg(server);
    stranger = await registerOrg(server);
    await recordRequests(server.app.control, requestLog(server), [
      // Older than the longest window the request log reads (400 days).
      row(org, wanted, NOW - 500 * DAY),
      // Twelve newer requests that mention it (retries naming their parent), and one whose id starts with it.
      ...Array.from({ length: 12 }, (_, i) => row(org, `req_retry_${i}`, NOW - i * 1000, { parent_id: wanted })),
      row(org, `${wanted}0`, NOW - DAY),
      row(stranger, 'req_theirs_000000000001', NOW - DAY),
    ]);
  });

  it('answers the request with that exact id, however old and however many others mention it', async () => {
    const answer = await org.client.get(`/analytics/requests/${wanted}`);
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expect(answer.body).toMatchObject({
      req_id: wanted,
      timestamp: new Date(NOW - 500 * DAY).toISOString(),
      project: { id: org.projectId, name: expect.any(String) },
      key: null,
      financials: { cost_pkr: 1.5, is_byok: 0 },
    });
  });

  it('answers 404 at req_id to a part of an id, and to another organisation’s request', async () => {
    for (const id of ['req_0190', wanted.toUpperCase(), 'req_theirs_000000000001']) {
      const answer = await org.client.get(`/analytics/requests/${id}`);
      expect(answer.status, id).toBe(404);
      expect(answer.body).toEqual({ error: 'request not found' });
      expect(answer.headers['x-error-field']).toBe('req_id');
    }
  });

  it('answers 401 without a session', async () => {
    const answer = await fetch(`${server.baseUrl}/analytics/requests/${wanted}`);
    expect(answer.status).toBe(401);
  });
});
