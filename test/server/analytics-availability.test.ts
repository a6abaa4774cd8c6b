import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { recordRequests } from '../../server/ingest/record-requests.js';
import type { RequestRecord } from '../../server/stores/telemetry/request-record.js';
import { register, startServer, type TestClient, type TestServer, requestLog } from './harness.js';

const FIXED_NOW = Date.UTC(2026, 10, 22, 7, 49, 19, 123);
const UNAVAILABLE = { error: 'analytics backend unavailable' };
const ANALYTICS = ['/analytics/summary', '/analytics/timeseries', '/analytics/requests'];

const scratch = mkdtempSync(join(tmpdir(), 'gc-analytics-availability-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

interface Setup {
  client: TestClient;
  orgId: string;
  projectId: string;
  keyId: string;
}

async function setUp(server: TestServer): Promise<Setup> {
  const { client, org } = await register(server);
  const orgId = (await server.app.control.organizations.findByName(org))!.id;
  const projectId: string = (await client.get('/projects')).body.projects[0].id;
  const key = await client.post('/keys', { project_id: projectId, name: 'telemetry key' });
  expect(key.status).toBe(201);
  return { client, orgId, projectId, keyId: key.body.id };
}

function row(setup: Setup, reqId: string, ts: number, extra: Partial<RequestRecord> = {}): RequestRecord {
  return {
    req_id: reqId,
    ts,
    org_id: setup.orgId,
    project_id: setup.projectId,
    key_id: setup.keyId,
    model: 'openai/gpt-4o-mini',
    status: 200,
    stream: 1,
    total_ms: 1500,
    ttft_ms: 300,
    tpot_ms: 12,
    pre_dispatch_ms: 20,
    prompt_tokens: 40,
    tokens_generated: 120,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: 10,
    total_tokens: 170,
    tokens_estimated: 0,
    cost_micro: 2_500_000,
    is_byok: 0,
    termination_reason: 'success',
    upstream_error: null,
    upstream_model: 'gpt-4o-mini-2024-07-18',
    served_by: null,
    attempts: null,
    api: 'chat',
    user_agent: 'availability-test/1.0',
    metadata: JSON.stringify({ customer: 'acme', feature: 'chat', trace_id: reqId }),
    ...extra,
  };
}

describe('while the telemetry store cannot be opened', () => {
  const missingDir = join(scratch, 'created-later');
  const telemetryDbPath = join(missingDir, 'telemetry.db');
  let server: TestServer;
  let setup: Setup;

  beforeAll(async () => {
    server = await startServer({ telemetryDbPath, now: () => FIXED_NOW });
    setup = await setUp(server);
  });
  afterAll(() => server?.close());

  it('answers 503 on analytics while keys, members and usage-throttling keep working', async () => {
    const { client, projectId, keyId } = setup;
    for (const path of [
      ...ANALYTICS,
      `/analytics/requests?key_id=${keyId}&search=x`,
      '/analytics/summary?time_range=1h',
    ]) {
      const answer = await client.get(path);
      expect(answer.status, path).toBe(503);
      expect(answer.body).toEqual(UNAVAILABLE);
    }
    // Parameter errors are still answered as such.
    expect((await client.get('/analytics/summary?time_range=1w')).status).toBe(400);

    const keys = await client.get('/keys');
    expect(keys.status).toBe(200);
    expect(keys.body.keys.map((k: any) => [k.id, k.last_used_at])).toEqual([[keyId, null]]);
    expect((await client.get('/members')).status).toBe(200);
    const created = await client.post('/keys', { project_id: projectId, name: 'made while telemetry is down' });
    expect(created.status).toBe(201);
    expect((await client.delete(`/keys/${created.body.id}`)).status).toBe(200);

    const throttling = await client.get('/admin/usage-throttling');
    expect(throttling.status).toBe(200);
    expect(throttling.body.keys).toEqual([
      expect.objectContaining({
        id: keyId,
        name: 'telemetry key',
        rate_limit_rpm: 60,
        requests_last_minute: null,
        throttled_requests: null,
        credit_limit_cents: null,
        spent_cents: 0,
      }),
    ]);

    // The settled figures still answer; the rates and forecasts are unknown, not nil.
    const spend = await client.get('/analytics/spend');
    expect(spend.status).toBe(200);
    expect(spend.body.organization).toMatchObject({ deposited_micro: 0, spent_micro: 0, burn: null, forecast: null });
    expect(spend.body.keys).toEqual([
      expect.objectContaining({ id: keyId, spent_micro: 0, burn: null, forecast: null }),
    ]);
  });

  it('recovers by itself once the store can be opened, with the right numbers', async () => {
    const { client, keyId } = setup;
    mkdirSync(missingDir);
    // The same server, no restart: an empty store answers with empty figures. The gateways'
    // writing thread may be making and migrating the store at that moment (retention's sweep
    // opens it), when a reader finds it half made and answers 503: it recovers once that is done.
    const empty = await vi.waitFor(
      async () => {
        const answer = await client.get('/analytics/summary');
        expect(answer.status).toBe(200);
        return answer;
      },
      { timeout: 10_000, interval: 100 },
    );
    expect(empty.body).toMatchObject({ total_requests: 0, avg_e2e_latency_ms: null, total_token_usage: 0 });

    await recordRequests(server.app.control, telemetryDbPath, [
      row(setup, 'req-recovered-1', FIXED_NOW - 30_000),
      row(setup, 'req-recovered-2', FIXED_NOW - 2 * 3_600_000, {
        status: 429,
        stream: 0,
        ttft_ms: null,
        tpot_ms: null,
        total_ms: 500,
        tokens_generated: 0,
        total_tokens: 40,
        cost_micro: 0,
        termination_reason: 'success',
      }),
    ]);

    const summary = await client.get(`/analytics/summary?key_id=${keyId}`);
    expect(summary.status).toBe(200);
    expect(summary.body).toEqual({
      time_range: '24h',
      total_requests: 2,
      avg_e2e_latency_ms: 1000,
      avg_ttft_ms: 300,
      avg_tokens_per_sec: 100, // 120 tokens over 1500 - 300 ms
      total_token_usage: 210,
      total_cost_pkr: 2.5,
    });
    const series = await client.get('/analytics/timeseries?interval=1h&metric=token_usage');
    expect(series.status).toBe(200);
    expect(series.body.data).toEqual([
      { bucket: '2026-11-22T05:00:00', group: null, value: 40 },
      { bucket: '2026-11-22T07:00:00', group: null, value: 170 },
    ]);
    const page = await client.get('/analytics/requests?search=RECOVERED-1');
    expect(page.status).toBe(200);
    expect(page.body.total).toBe(1);
    expect(page.body.requests[0]).toMatchObject({
      req_id: 'req-recovered-1',
      key: { id: keyId, name: 'telemetry key' },
    });

    const keys = await client.get('/keys');
    expect(keys.body.keys[0].last_used_at).toBe(new Date(FIXED_NOW - 30_000).toISOString());
    const throttling = await client.get('/admin/usage-throttling');
    expect(throttling.body.keys[0]).toMatchObject({
      requests_last_minute: 1,
      throttled_requests: 1,
      spent_cents: 2_500_000,
    });
    expect(server.logs()).toContain('telemetry store reachable again');
  });
});

describe('a slow analytics query', () => {
  /** Rows read by the heavy chart; sized so it outlasts many GET /keys calls. */
  const ROWS = 40_000;
  let server: TestServer;
  let setup: Setup;

  beforeAll(async () => {
    server = await startServer({ now: () => FIXED_NOW });
    setup = await setUp(server);
    await recordRequests(
      server.app.control,
      requestLog(server),
      (function* () {
        for (let i = 0; i < ROWS; i++) {
          yield row(setup, `req-bulk-${i}`, FIXED_NOW - Math.floor((i * 300 * 86_400_000) / ROWS), {
            metadata: JSON.stringify({
              customer: `customer-${i % 97}`,
              feature: 'chat',
              trace_id: `trace-${i}`,
            }),
          });
        }
      })(),
    );
  }, 120_000);
  afterAll(() => server?.close());

  it('does not stall GET /keys', async () => {
    const { client } = setup;
    // Both analytics workers are started, so the heavy request measures the query alone.
    await Promise.all([client.get('/analytics/summary?time_range=1s'), client.get('/analytics/summary?time_range=2s')]);

    const order: string[] = [];
    let heavyDone = false;
    const heavy = client
      // A point per row, a second wide: no rollup is that fine, so the rows are read one by one.
      .get('/analytics/timeseries?time_range=400d&interval=1s&metric=latency&group_by=model')
      .then((answer) => {
        heavyDone = true;
        order.push('heavy');
        return answer;
      });
    // GET /keys one after another for as long as the heavy chart runs.
    let keysAnswered = 0;
    while (!heavyDone && keysAnswered < 1000) {
      const keys = await client.get('/keys');
      expect(keys.status).toBe(200);
      expect(keys.body.keys[0].last_used_at).toBe(new Date(FIXED_NOW).toISOString());
      if (!heavyDone) order.push('keys');
      keysAnswered++;
    }
    const answer = await heavy;
    expect(answer.status).toBe(200);
    expect(answer.body.data).toHaveLength(ROWS);
    // Ten GET /keys answered, one after another, before the heavy chart was. (Run on the
    // event loop instead, the chart answers first: none of them is answered before it.)
    expect(order.slice(0, 10)).toEqual(Array(10).fill('keys'));
    expect(order.at(-1)).toBe('heavy');
  });
});
