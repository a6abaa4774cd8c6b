import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordRequests } from '../../server/ingest/record-requests.js';
import type { RequestRecord } from '../../server/stores/telemetry/request-record.js';
import { registerOrg, requestLog, startServer, type TestClient, type TestServer } from './harness.js';
import { requestRecord, seededRandom } from './request-rows.js';

/**
 * `target` on the analytics and health endpoints, through the real routes on a real store (SQLite,
 * and PostgreSQL in vitest's node-postgres project): rows served by two targets and by none, over
 * two days, so that the answers without a target come from the rollups and those with one from
 * the rows; each narrowed figure is checked against the same rows counted here.
 */

/** Frozen mid-hour and mid-cell: windows cut hour and five-minute cells at both edges. */
const NOW = Date.UTC(2026, 10, 4, 10, 7, 33, 123);
const CELL = 300_000;
const HOUR = 3_600_000;
const DAY = 86_400_000;

const ROUTE = 'openai/gpt-4o-mini';
/** A route whose only traffic in the window failed, and whose last success is days older. */
const FAILING_ROUTE = 'svc/auto';
const ONLY_T2_ROUTE = 'openai/gpt-4o';
const T1 = 'openai/gpt-4o-mini-2024-07-18';
/** A model id holding `/` of its own: the provider is the text before the first one. */
const T2 = 'openrouter/openai/gpt-4o-mini';

let server: TestServer;
let client: TestClient;
const rows: RequestRecord[] = [];
/** When FAILING_ROUTE last succeeded through T1: nine days ago, before the listing window. */
const OLD_SUCCESS = NOW - 9 * DAY + 1234;

let counter = 0;
function row(orgId: string, ts: number, served: string | null, model = ROUTE, failed = false): RequestRecord {
  counter++;
  return {
    ...requestRecord(counter),
    req_id: `req-target-${process.pid}-${counter}`,
    org_id: orgId,
    ts,
    model,
    served_by: served,
    status: failed ? 502 : 200,
    upstream_error: failed ? '502 bad gateway' : null,
    termination_reason: 'success',
    total_ms: 100 + (counter % 40) * 25,
    total_tokens: 10 + (counter % 13),
    cost_micro: 1_000 + (counter % 7) * 100,
  };
}

beforeAll(async () => {
  server = await startServer({ now: () => NOW });
  const org = await registerOrg(server);
  client = org.client;
  const other = await registerOrg(server);
  const random = seededRandom(52);
  for (let i = 0; i < 300; i++) {
    const served = [T1, T2, null][i % 3]!;
    // Two days and a bit back: the previous window of a day holds rows too.
    rows.push(row(org.orgId, NOW - Math.floor(random() * 2.1 * DAY), served, ROUTE, i % 7 === 0));
  }
  rows.push(
    row(org.orgId, NOW - 3 * HOUR, T1, FAILING_ROUTE, true),
    row(org.orgId, NOW - HOUR, T1, FAILING_ROUTE, true),
  );
  rows.push(row(org.orgId, OLD_SUCCESS, T1, FAILING_ROUTE));
  rows.push(row(org.orgId, NOW - 2 * HOUR, T2, ONLY_T2_ROUTE));
  // Another organisation's rows by the same target never count.
  const foreign = Array.from({ length: 20 }, (_, i) => row(other.orgId, NOW - i * HOUR, T1));
  await recordRequests(server.app.control, requestLog(server), [...rows, ...foreign]);
});
afterAll(() => server?.close());

const q = (target: string) => `target=${encodeURIComponent(target)}`;
const between = (from: number, to: number) => (r: RequestRecord) => r.ts >= from && r.ts <= to;
const servedBy = (target: string | null) => (r: RequestRecord) => r.served_by === target;
const sum = (list: RequestRecord[], pick: (r: RequestRecord) => number) => list.reduce((a, r) => a + pick(r), 0);
/** The rows of the last day (filled in beforeAll). */
const lastDay = () => rows.filter(between(NOW - DAY, NOW));

async function ok<T = any>(path: string): Promise<T> {
  const answer = await client.get<T>(path);
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  return answer.body;
}

describe('analytics narrowed to a target', () => {
  it('the summary counts only the rows that target served', async () => {
    const all = await ok('/analytics/summary?time_range=24h');
    expect(all.total_requests).toBe(lastDay().length);
    let narrowed = 0;
    for (const target of [T1, T2]) {
      const own = lastDay().filter(servedBy(target));
      const summary = await ok(`/analytics/summary?time_range=24h&${q(target)}`);
      expect(summary.total_requests).toBe(own.length);
      expect(summary.total_token_usage).toBe(sum(own, (r) => r.total_tokens));
      expect(summary.avg_e2e_latency_ms).toBeCloseTo(sum(own, (r) => r.total_ms) / own.length, 9);
      narrowed += summary.total_requests;
    }
    // The rows no target served (null) are in neither.
    expect(narrowed).toBe(all.total_requests - lastDay().filter(servedBy(null)).length);
  });

  it("the timeseries gives each hour's requests of that target", async () => {
    const series = await ok(`/analytics/timeseries?time_range=24h&interval=1h&${q(T2)}`);
    const expected = new Map<string, number>();
    for (const r of lastDay().filter(servedBy(T2))) {
      const bucket = new Date(r.ts - (r.ts % HOUR)).toISOString().slice(0, 19);
      expected.set(bucket, (expected.get(bucket) ?? 0) + 1);
    }
    const got = new Map(series.data.map((p: { bucket: string; value: number }) => [p.bucket, p.value]));
    expect(got).toEqual(expected);
  });

  it("top, compare, the dashboard and the request log agree with the target's rows", async () => {
    const own = lastDay().filter(servedBy(T1));
    const before = rows.filter(between(NOW - 2 * DAY - 1, NOW - DAY - 1)).filter(servedBy(T1));
    const top = await ok(`/analytics/top?group_by=model&time_range=24h&${q(T1)}`);
    expect(top.total).toMatchObject({
      requests: own.length,
      cost_micro: sum(own, (r) => r.cost_micro),
      errors: own.filter((r) => r.status >= 500).length,
      previous_requests: before.length,
    });
    expect(top.groups.map((g: { group: string }) => g.group).sort()).toEqual(
      [...new Set(own.map((r) => r.model))].sort(),
    );
    const compare = await ok(`/analytics/compare?time_range=24h&${q(T1)}`);
    expect(compare.current.total_requests).toBe(own.length);
    expect(compare.previous.total_requests).toBe(before.length);
    const dashboard = await ok(`/analytics/dashboard?time_range=24h&${q(T1)}`);
    expect(dashboard.totals.current.requests).toBe(own.length);
    expect(dashboard.totals.current.server_errors).toBe(own.filter((r) => r.status >= 500).length);
    const page = await ok(`/analytics/requests?time_range=24h&limit=200&${q(T1)}`);
    expect(page.total).toBe(own.length);
    expect(page.requests.map((r: { req_id: string }) => r.req_id).sort()).toEqual(own.map((r) => r.req_id).sort());
  });
});

describe('health narrowed to a target', () => {
  const cells = 288;
  const from = NOW - (NOW % CELL) - (cells - 1) * CELL;
  const inWindow = () => rows.filter(between(from, from + cells * CELL - 1));
  const models = (body: any) => (body.providers as { models: { model: string }[] }[]).flatMap((p) => p.models) as any[];

  it("counts each model's requests and errors served by the target, cell by cell", async () => {
    const body = await ok(`/analytics/health?window=24h&${q(T1)}`);
    const own = inWindow()
      .filter(servedBy(T1))
      .filter((r) => r.model === ROUTE);
    const model = models(body).find((m) => m.model === ROUTE)!;
    expect(model.requests).toBe(own.length);
    expect(model.errors).toBe(own.filter((r) => r.status >= 500).length);
    const strip = Array.from({ length: cells }, () => 0);
    for (const r of own) strip[Math.floor((r.ts - from) / CELL)]! += 1;
    expect(model.strip.requests).toEqual(strip);
    const lastOk = Math.max(...own.filter((r) => r.status < 400).map((r) => r.ts));
    expect(model.last_success_at).toBe(new Date(lastOk).toISOString());
    expect(model.p95_latency_ms).not.toBeNull();
    // Unnarrowed, the same model counts every target's rows and those of none.
    const all = models(await ok('/analytics/health?window=24h')).find((m) => m.model === ROUTE)!;
    expect(all.requests).toBe(inWindow().filter((r) => r.model === ROUTE).length);
  });

  it('lists only the models the target served, with a last success older than the window', async () => {
    const t1 = models(await ok(`/analytics/health?window=24h&${q(T1)}`));
    expect(t1.map((m) => m.model).sort()).toEqual([FAILING_ROUTE, ROUTE].sort());
    const failing = t1.find((m) => m.model === FAILING_ROUTE)!;
    expect(failing).toMatchObject({ requests: 2, errors: 2, status: 'down' });
    expect(failing.last_success_at).toBe(new Date(OLD_SUCCESS).toISOString());
    const t2 = models(await ok(`/analytics/health?window=24h&${q(T2)}`));
    expect(t2.map((m) => m.model).sort()).toEqual([ONLY_T2_ROUTE, ROUTE].sort());
    // A target nothing served: no model listed.
    expect(models(await ok(`/analytics/health?${q('openai/never-served')}`))).toEqual([]);
  });
});

describe('a malformed target', () => {
  const bad = ['gpt-4o', '/gpt-4o', 'openai/', 'OpenAI/gpt-4o', 'openai/gpt 4o', `openai/${'x'.repeat(257)}`];
  const endpoints = [
    '/analytics/summary?',
    '/analytics/timeseries?',
    '/analytics/top?group_by=key&',
    '/analytics/dashboard?',
    '/analytics/health?',
  ];

  it('is refused with 400 naming the field, on every endpoint that takes one', async () => {
    for (const endpoint of endpoints) {
      for (const target of bad) {
        const answer = await client.get(`${endpoint}${q(target)}`);
        expect(answer.status, `${endpoint} ${target}`).toBe(400);
        expect(answer.body).toEqual({ error: expect.stringContaining('provider/model') });
        expect(answer.headers['x-error-field']).toBe('target');
      }
    }
  });
});
