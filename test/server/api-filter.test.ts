import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordRequests } from '../../server/ingest/record-requests.js';
import type { RequestApi } from '../../server/schemas/request-log.js';
import type { RequestRecord } from '../../server/stores/telemetry/request-record.js';
import { registerOrg, requestLog, startServer, type TestClient, type TestServer } from './harness.js';
import { requestRecord, seededRandom } from './request-rows.js';

/**
 * `api` on the request log, the analytics and health, and `group_by=api` on the timeseries and
 * top, through the real routes on a real store (SQLite, and PostgreSQL in vitest's node-postgres
 * project): rows of four APIs and of none (null, unknown) over two days, so that the answers
 * without an API come from the rollups and those with one from the rows; each narrowed or
 * grouped figure is checked against the same rows counted here.
 */

/** Frozen mid-hour and mid-cell: windows cut hour and five-minute cells at both edges. */
const NOW = Date.UTC(2026, 10, 4, 10, 7, 33, 123);
const CELL = 300_000;
const HOUR = 3_600_000;
const DAY = 86_400_000;

const ROUTE = 'openai/gpt-4o-mini';
const EMBED_ROUTE = 'svc/embed';
const T1 = 'openai/gpt-4o-mini-2024-07-18';
/** The rows' APIs in turn: chat the most, and a share whose API is unknown. */
const APIS: readonly (RequestApi | null)[] = ['chat', 'chat', 'messages', 'responses', null, 'count_tokens', 'chat'];

let server: TestServer;
let client: TestClient;
const rows: RequestRecord[] = [];

let counter = 0;
function row(orgId: string, ts: number, api: RequestApi | null, model = ROUTE, failed = false): RequestRecord {
  counter++;
  return {
    ...requestRecord(counter),
    req_id: `req-api-${process.pid}-${counter}`,
    org_id: orgId,
    ts,
    model,
    api,
    served_by: counter % 2 ? T1 : null,
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
  const random = seededRandom(54);
  for (let i = 0; i < 300; i++) {
    // Two days and a bit back: the previous window of a day holds rows too.
    rows.push(row(org.orgId, NOW - Math.floor(random() * 2.1 * DAY), APIS[i % APIS.length]!, ROUTE, i % 9 === 0));
  }
  for (let i = 0; i < 12; i++) rows.push(row(org.orgId, NOW - i * 97 * 60_000, 'embeddings', EMBED_ROUTE));
  // Another organisation's rows of the same API never count.
  const foreign = Array.from({ length: 20 }, (_, i) => row(other.orgId, NOW - i * HOUR, 'messages'));
  await recordRequests(server.app.control, requestLog(server), [...rows, ...foreign]);
});
afterAll(() => server?.close());

const between = (from: number, to: number) => (r: RequestRecord) => r.ts >= from && r.ts <= to;
const cameIn = (api: RequestApi | null) => (r: RequestRecord) => r.api === api;
const sum = (list: RequestRecord[], pick: (r: RequestRecord) => number) => list.reduce((a, r) => a + pick(r), 0);
/** The rows of the last day (filled in beforeAll). */
const lastDay = () => rows.filter(between(NOW - DAY, NOW));
const hourOf = (ts: number) => new Date(ts - (ts % HOUR)).toISOString().slice(0, 19);

async function ok<T = any>(path: string): Promise<T> {
  const answer = await client.get<T>(path);
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  return answer.body;
}

describe('analytics narrowed to an API', () => {
  it('the summary counts only the rows that came in on it; rows of an unknown API in none', async () => {
    const all = await ok('/analytics/summary?time_range=24h');
    expect(all.total_requests).toBe(lastDay().length);
    let narrowed = 0;
    for (const api of ['chat', 'messages', 'responses', 'count_tokens', 'embeddings'] as const) {
      const own = lastDay().filter(cameIn(api));
      expect(own.length, api).toBeGreaterThan(0);
      const summary = await ok(`/analytics/summary?time_range=24h&api=${api}`);
      expect(summary.total_requests, api).toBe(own.length);
      expect(summary.total_token_usage).toBe(sum(own, (r) => r.total_tokens));
      expect(summary.avg_e2e_latency_ms).toBeCloseTo(sum(own, (r) => r.total_ms) / own.length, 9);
      narrowed += summary.total_requests;
    }
    expect(narrowed).toBe(all.total_requests - lastDay().filter(cameIn(null)).length);
  });

  it("the timeseries gives each hour's requests of that API, and together with a target only the rows of both", async () => {
    const expectHours = async (query: string, own: RequestRecord[]) => {
      const series = await ok(`/analytics/timeseries?time_range=24h&interval=1h&${query}`);
      const expected = new Map<string, number>();
      for (const r of own) expected.set(hourOf(r.ts), (expected.get(hourOf(r.ts)) ?? 0) + 1);
      expect(new Map(series.data.map((p: { bucket: string; value: number }) => [p.bucket, p.value]))).toEqual(expected);
    };
    await expectHours('api=messages', lastDay().filter(cameIn('messages')));
    await expectHours(
      `api=chat&target=${encodeURIComponent(T1)}`,
      lastDay().filter((r) => r.api === 'chat' && r.served_by === T1),
    );
  });

  it("top, compare, the dashboard and the request log agree with the API's rows", async () => {
    const own = lastDay().filter(cameIn('chat'));
    const before = rows.filter(between(NOW - 2 * DAY - 1, NOW - DAY - 1)).filter(cameIn('chat'));
    const top = await ok('/analytics/top?group_by=model&time_range=24h&api=chat');
    expect(top.total).toMatchObject({
      requests: own.length,
      cost_micro: sum(own, (r) => r.cost_micro),
      errors: own.filter((r) => r.status >= 500).length,
      previous_requests: before.length,
    });
    const compare = await ok('/analytics/compare?time_range=24h&api=chat');
    expect(compare.current.total_requests).toBe(own.length);
    expect(compare.previous.total_requests).toBe(before.length);
    const dashboard = await ok('/analytics/dashboard?time_range=24h&api=chat');
    expect(dashboard.totals.current.requests).toBe(own.length);
    expect(dashboard.totals.current.server_errors).toBe(own.filter((r) => r.status >= 500).length);
    const page = await ok('/analytics/requests?time_range=24h&limit=200&api=chat');
    expect(page.total).toBe(own.length);
    expect(page.requests.map((r: { req_id: string }) => r.req_id).sort()).toEqual(own.map((r) => r.req_id).sort());
    expect(new Set(page.requests.map((r: { api: string }) => r.api))).toEqual(new Set(['chat']));
  });

  it('the request log names each row’s API, null where unknown', async () => {
    const page = await ok('/analytics/requests?time_range=24h&limit=200');
    const byId = new Map(rows.map((r) => [r.req_id, r.api]));
    expect(page.requests.length).toBeGreaterThan(0);
    for (const answered of page.requests as { req_id: string; api: string | null }[])
      expect(answered.api).toBe(byId.get(answered.req_id));
    expect(page.requests.some((r: { api: string | null }) => r.api === null)).toBe(true);
    const unknown = rows.find((r) => r.api === null)!;
    expect((await ok(`/analytics/requests/${unknown.req_id}`)).api).toBeNull();
  });
});

describe('grouped by API', () => {
  it("the timeseries gives each hour's requests of each API, the unknown ones as the null group", async () => {
    const series = await ok('/analytics/timeseries?time_range=24h&interval=1h&group_by=api');
    expect(series.group_by).toBe('api');
    const expected = new Map<string, number>();
    for (const r of lastDay()) {
      const point = JSON.stringify([hourOf(r.ts), r.api]);
      expected.set(point, (expected.get(point) ?? 0) + 1);
    }
    const got = new Map(
      series.data.map((p: { bucket: string; group: string | null; value: number }) => [
        JSON.stringify([p.bucket, p.group]),
        p.value,
      ]),
    );
    expect(got).toEqual(expected);
    // Grouped and narrowed to a model at once: the rows answer that too.
    const embed = await ok(`/analytics/timeseries?time_range=24h&interval=1h&group_by=api&model_alias=${EMBED_ROUTE}`);
    expect(new Set(embed.data.map((p: { group: string }) => p.group))).toEqual(new Set(['embeddings']));
  });

  it('top gives each API’s requests, spend, errors, trend and p95, the unknown ones as the null group', async () => {
    const top = await ok('/analytics/top?group_by=api&time_range=24h&limit=50');
    expect(top.group_by).toBe('api');
    const before = rows.filter(between(NOW - 2 * DAY - 1, NOW - DAY - 1));
    const groups = new Map(top.groups.map((g: { group: string | null }) => [g.group, g]));
    expect([...groups.keys()].sort()).toEqual([...new Set(lastDay().map((r) => r.api))].sort() as (string | null)[]);
    for (const [api, group] of groups as Map<RequestApi | null, any>) {
      const own = lastDay().filter(cameIn(api));
      expect(group, String(api)).toMatchObject({
        name: null,
        requests: own.length,
        cost_micro: sum(own, (r) => r.cost_micro),
        errors: own.filter((r) => r.status >= 500).length,
        previous_requests: before.filter(cameIn(api)).length,
      });
      expect((group.trend as number[]).reduce((all, n) => all + n, 0)).toBe(own.length);
      expect(group.p95_latency_ms).not.toBeNull();
    }
    expect(top.total.requests).toBe(lastDay().length);
  });
});

describe('health narrowed to an API', () => {
  const cells = 288;
  const from = NOW - (NOW % CELL) - (cells - 1) * CELL;
  const inWindow = () => rows.filter(between(from, from + cells * CELL - 1));
  const models = (body: any) => (body.providers as { models: { model: string }[] }[]).flatMap((p) => p.models) as any[];

  it("counts each model's requests and errors of that API, cell by cell, and lists only its models", async () => {
    const body = await ok('/analytics/health?window=24h&api=messages');
    const own = inWindow().filter(cameIn('messages'));
    expect(models(body).map((m) => m.model)).toEqual([ROUTE]);
    const model = models(body)[0]!;
    expect(model.requests).toBe(own.length);
    expect(model.errors).toBe(own.filter((r) => r.status >= 500).length);
    const strip = Array.from({ length: cells }, () => 0);
    for (const r of own) strip[Math.floor((r.ts - from) / CELL)]! += 1;
    expect(model.strip.requests).toEqual(strip);
    const embeddings = models(await ok('/analytics/health?window=24h&api=embeddings'));
    expect(embeddings.map((m) => m.model)).toEqual([EMBED_ROUTE]);
    expect(embeddings[0].requests).toBe(inWindow().filter(cameIn('embeddings')).length);
    // With a target too: only the rows of both.
    const both = models(await ok(`/analytics/health?window=24h&api=chat&target=${encodeURIComponent(T1)}`));
    expect(both.find((m) => m.model === ROUTE)!.requests).toBe(
      inWindow().filter((r) => r.api === 'chat' && r.served_by === T1).length,
    );
  });
});

describe('an API this server does not know', () => {
  const bad = ['graphql', 'Chat', 'CHAT', 'chat ', 'chat/completions', 'null'];
  const endpoints = [
    '/analytics/summary?',
    '/analytics/timeseries?',
    '/analytics/top?group_by=key&',
    '/analytics/compare?',
    '/analytics/dashboard?',
    '/analytics/health?',
    '/analytics/requests?',
  ];

  it('is refused with 400 naming the field, on every endpoint that takes one', async () => {
    for (const endpoint of endpoints) {
      for (const api of bad) {
        const answer = await client.get(`${endpoint}api=${encodeURIComponent(api)}`);
        expect(answer.status, `${endpoint} ${api}`).toBe(400);
        expect(answer.body).toEqual({ error: expect.stringContaining('api must be one of chat, messages') });
        expect(answer.headers['x-error-field']).toBe('api');
      }
    }
  });

  it('is not a grouping either', async () => {
    const answer = await client.get('/analytics/timeseries?group_by=apis');
    expect(answer.status).toBe(400);
    expect(answer.body.error).toContain('project, key, model, api');
    expect((await client.get('/analytics/top?group_by=apis')).status).toBe(422);
  });
});
