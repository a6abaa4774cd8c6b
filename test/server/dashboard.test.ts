import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordRequests } from '../../server/ingest/record-requests.js';
import { cacheJson } from '../../server/routes/dashboard-json.js';
import type { RequestRecord } from '../../server/stores/telemetry/request-record.js';
import { registerOrg, startServer, type TestClient, type TestServer, requestLog } from './harness.js';
import { requestRecord, seededRandom } from './request-rows.js';

/**
 * GET /analytics/dashboard against the rows themselves: every bucket's counts and sums exact,
 * every percentile within the stated relative error of the exact one, in UTC and in reporting
 * zones whose buckets fall off the hour (+05:45) or last 25 hours (New York's fall-back day).
 */

/** Frozen mid-minute three days after New York's fall-back (2026-11-01 06:00Z). */
const NOW = Date.UTC(2026, 10, 4, 10, 7, 33, 123);
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const MODELS = ['openai/gpt-4o-mini', 'anthropic/claude-sonnet-4', 'svc/fast', 'mistral/mistral-large'];

let server: TestServer;
beforeAll(async () => {
  server = await startServer({ now: () => NOW });
});
afterAll(() => server?.close());

interface Org {
  client: TestClient;
  orgId: string;
  projects: string[];
  keys: string[];
}

async function freshOrg(): Promise<Org> {
  const { client, orgId, projectId: first } = await registerOrg(server);
  const second = (await server.app.control.write((tx) => tx.organizations.addProject(orgId, 'Second', NOW))).id;
  const key = async (projectId: string, name: string) =>
    (await client.post('/keys', { project_id: projectId, name })).body.id as string;
  return { client, orgId, projects: [first, second], keys: [await key(first, 'alpha'), await key(second, 'beta')] };
}

let counter = 0;
/** Rows over the last eight days, of every outcome, with and without cache fields, first tokens and prompt counts. */
function rowsOf(org: Org, seed: number, count: number): RequestRecord[] {
  const random = seededRandom(seed);
  const pick = <T>(list: readonly T[]) => list[Math.floor(random() * list.length)]!;
  const owners = [
    { key: org.keys[0]!, project: org.projects[0]! },
    { key: org.keys[1]!, project: org.projects[1]! },
    { key: null, project: null },
  ];
  const outcomes: { status: number; upstream_error: string | null }[] = [
    { status: 200, upstream_error: null },
    { status: 200, upstream_error: null },
    { status: 200, upstream_error: null },
    { status: 400, upstream_error: '400 invalid_request_error: bad' },
    { status: 401, upstream_error: null },
    { status: 429, upstream_error: null },
    { status: 502, upstream_error: '502 bad gateway' },
  ];
  const at = (ts: number): RequestRecord => {
    counter++;
    const owner = pick(owners);
    const model = pick(MODELS);
    const cached = model !== 'svc/fast';
    const outcome = pick(outcomes);
    return {
      ...requestRecord(counter),
      req_id: `req-board-${process.pid}-${counter}`,
      ts,
      org_id: org.orgId,
      project_id: owner.project,
      key_id: owner.key,
      model,
      ...outcome,
      // A long tail: percentiles far apart, as real latencies are.
      total_ms: Math.round(20 + Math.exp(random() * 9)),
      ttft_ms: random() < 0.2 ? null : 5 + Math.floor(random() * 800),
      prompt_tokens: random() < 0.1 ? null : Math.floor(random() * 4000),
      tokens_generated: Math.floor(random() * 900),
      cache_read_input_tokens: cached ? Math.floor(random() * 3000) : null,
      cache_creation_input_tokens: cached ? Math.floor(random() * 200) : null,
      cost_micro: Math.floor(random() * 3_000_000),
    };
  };
  const rows = Array.from({ length: count }, () => at(NOW - Math.floor(random() * 8 * DAY)));
  // On and either side of the windows' edges.
  for (const ts of [NOW, NOW + 1, NOW - DAY, NOW - DAY - 1, NOW - 7 * DAY, NOW - 7 * DAY - 1, NOW - HOUR]) {
    rows.push(at(ts));
  }
  return rows;
}

/** The exact value at quantile q: rank floor(q × (n − 1)) of the ascending values. */
function exactQuantile(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(q * (sorted.length - 1))]!;
}

interface Bucket {
  start: string;
  requests: number;
  ok: number;
  client_errors: number;
  server_errors: number;
  refused: number;
  cost_micro: number;
  tokens: { prompt: number | null; generated: number; cache_read: number | null; cache_write: number | null };
  tokens_per_second: number | null;
  latency_ms: { p50: number; p95: number; p99: number } | null;
  ttft_ms: { p50: number; p95: number; p99: number } | null;
}

const sum = (rows: RequestRecord[], of: (row: RequestRecord) => number) => rows.reduce((all, row) => all + of(row), 0);
const knownSum = (rows: RequestRecord[], of: (row: RequestRecord) => number | null) => {
  const known = rows.filter((row) => of(row) !== null);
  return rows.length > 0 && known.length === 0 ? null : sum(known, (row) => of(row)!);
};

/** Checks each bucket against the rows between its start (or the window's) and the next bucket's. */
function expectExact(
  body: { buckets: Bucket[]; from: string; to: string; percentile_relative_error: number },
  rows: RequestRecord[],
  inScope: (row: RequestRecord) => boolean,
) {
  const from = Date.parse(body.from);
  const to = Date.parse(body.to);
  const starts = body.buckets.map((b) => Date.parse(b.start));
  expect(starts[0]).toBeLessThanOrEqual(from);
  let checked = 0;
  body.buckets.forEach((bucket, i) => {
    const end = i + 1 < starts.length ? starts[i + 1]! : to + 1;
    expect(end, bucket.start).toBeGreaterThan(starts[i]!);
    const mine = rows.filter((r) => inScope(r) && r.ts >= Math.max(from, starts[i]!) && r.ts < end);
    checked += mine.length;
    const fourxx = (r: RequestRecord) => r.status >= 400 && r.status < 500;
    expect(
      {
        requests: bucket.requests,
        ok: bucket.ok,
        client_errors: bucket.client_errors,
        server_errors: bucket.server_errors,
        refused: bucket.refused,
        cost_micro: bucket.cost_micro,
        tokens: bucket.tokens,
      },
      bucket.start,
    ).toEqual({
      requests: mine.length,
      ok: mine.filter((r) => r.status < 400).length,
      client_errors: mine.filter((r) => fourxx(r) && r.upstream_error !== null).length,
      server_errors: mine.filter((r) => r.status >= 500).length,
      refused: mine.filter((r) => fourxx(r) && r.upstream_error === null).length,
      cost_micro: sum(mine, (r) => r.cost_micro),
      tokens: {
        prompt: knownSum(mine, (r) => r.prompt_tokens),
        generated: sum(mine, (r) => r.tokens_generated),
        cache_read: knownSum(mine, (r) => r.cache_read_input_tokens),
        cache_write: knownSum(mine, (r) => r.cache_creation_input_tokens),
      },
    });
    const bound = body.percentile_relative_error;
    const within = (got: { p50: number; p95: number; p99: number } | null, values: number[]) => {
      if (values.length === 0) return expect(got, bucket.start).toBeNull();
      for (const [name, q] of [
        ['p50', 0.5],
        ['p95', 0.95],
        ['p99', 0.99],
      ] as const) {
        const exact = exactQuantile(values, q);
        expect(Math.abs(got![name] - exact), `${bucket.start} ${name}`).toBeLessThanOrEqual(exact * bound + 1e-9);
      }
    };
    within(
      bucket.latency_ms,
      mine.map((r) => r.total_ms),
    );
    within(
      bucket.ttft_ms,
      mine.flatMap((r) => (r.ttft_ms === null ? [] : [r.ttft_ms])),
    );
  });
  // Every row of the window is in exactly one bucket.
  expect(checked).toBe(rows.filter((r) => inScope(r) && r.ts >= from && r.ts <= to).length);
  expect(checked).toBeGreaterThan(0);
}

/** Every prompt token of the rows whose prompt count is known (null: none is). */
const promptOf = (rows: RequestRecord[]) =>
  knownSum(rows, (r) =>
    r.prompt_tokens === null
      ? null
      : r.prompt_tokens + (r.cache_read_input_tokens ?? 0) + (r.cache_creation_input_tokens ?? 0),
  );

/** The cache by model against the rows of the window in scope. */
function expectCache(
  body: {
    cache: { model: string; prompt_tokens: number | null; cache_read_tokens: number | null }[];
    from: string;
    to: string;
  },
  rows: RequestRecord[],
  inScope: (row: RequestRecord) => boolean,
) {
  const mine = rows.filter((r) => inScope(r) && r.ts >= Date.parse(body.from) && r.ts <= Date.parse(body.to));
  const models = [...new Set(mine.map((r) => r.model))].sort();
  expect(body.cache.map((c) => c.model)).toEqual(models);
  for (const cache of body.cache) {
    const of = mine.filter((r) => r.model === cache.model);
    expect(cache.prompt_tokens, cache.model).toBe(promptOf(of));
    expect(cache.cache_read_tokens, cache.model).toBe(knownSum(of, (r) => r.cache_read_input_tokens));
  }
}

/** The whole window's figures, and the window's just before, against the rows. */
function expectTotals(body: any, rows: RequestRecord[]) {
  const from = Date.parse(body.from);
  const to = Date.parse(body.to);
  const windows = { current: [from, to], previous: [from - (to - from) - 1, from - 1] } as const;
  for (const [name, [start, end]] of Object.entries(windows)) {
    const mine = rows.filter((r) => r.ts >= start && r.ts <= end);
    expect(mine.length, name).toBeGreaterThan(0);
    expectExact(
      {
        ...body,
        from: new Date(start).toISOString(),
        to: new Date(end).toISOString(),
        buckets: [{ ...body.totals[name], start: new Date(start).toISOString() }],
      },
      rows,
      () => true,
    );
  }
  expect(body.totals.current.requests).toBe(body.buckets.reduce((n: number, b: Bucket) => n + b.requests, 0));
}

describe('GET /analytics/dashboard', () => {
  let org: Org;
  let rows: RequestRecord[];
  beforeAll(async () => {
    org = await freshOrg();
    rows = rowsOf(org, 7, 4000);
    await recordRequests(server.app.control, requestLog(server), rows);
  });
  const everything = () => true;

  it('gives UTC days by default: counts, sums and tokens exact, percentiles within the stated error', async () => {
    const answer = await org.client.get('/analytics/dashboard?time_range=7d&interval=1d');
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expect(answer.body).toMatchObject({
      time_zone: 'UTC',
      interval: '1d',
      time_range: '7d',
      percentile_relative_error: 0.01,
    });
    expect(answer.body.buckets.map((b: Bucket) => b.start)).toEqual([
      '2026-10-28T00:00:00+00:00',
      '2026-10-29T00:00:00+00:00',
      '2026-10-30T00:00:00+00:00',
      '2026-10-31T00:00:00+00:00',
      '2026-11-01T00:00:00+00:00',
      '2026-11-02T00:00:00+00:00',
      '2026-11-03T00:00:00+00:00',
      '2026-11-04T00:00:00+00:00',
    ]);
    expectExact(answer.body, rows, everything);
    expectTotals(answer.body, rows);
  });

  it("follows the organisation's reporting zone: Kathmandu's days start at 18:15 UTC, New York's fall-back day lasts 25 hours", async () => {
    const zone = async (name: string) =>
      expect((await org.client.call('PUT', '/organization/reporting-zone', { time_zone: name })).status).toBe(200);

    await zone('Asia/Kathmandu');
    const kathmandu = (await org.client.get('/analytics/dashboard?time_range=7d&interval=1d')).body;
    expect(kathmandu.time_zone).toBe('Asia/Kathmandu');
    expect(kathmandu.buckets[1].start).toBe('2026-10-29T00:00:00+05:45');
    expect(Date.parse(kathmandu.buckets[1].start)).toBe(Date.UTC(2026, 9, 28, 18, 15));
    expectExact(kathmandu, rows, everything);

    await zone('America/New_York');
    const newYork = (await org.client.get('/analytics/dashboard?time_range=7d&interval=1d')).body;
    const starts: string[] = newYork.buckets.map((b: Bucket) => b.start);
    expect(starts).toContain('2026-11-01T00:00:00-04:00');
    expect(starts).toContain('2026-11-02T00:00:00-05:00');
    const fallBack = starts.indexOf('2026-11-01T00:00:00-04:00');
    expect(Date.parse(starts[fallBack + 1]!) - Date.parse(starts[fallBack]!)).toBe(25 * HOUR);
    expectExact(newYork, rows, everything);

    // Six-hour buckets across the change: local 00:00, 06:00, … on both sides of it.
    const sixHours = (await org.client.get('/analytics/dashboard?time_range=7d&interval=6h')).body;
    expect(sixHours.buckets.map((b: Bucket) => b.start)).toEqual(
      expect.arrayContaining(['2026-11-01T00:00:00-04:00', '2026-11-01T06:00:00-05:00', '2026-11-02T00:00:00-05:00']),
    );
    expectExact(sixHours, rows, everything);
    await zone('UTC');
  });

  it('narrows to a key, a model, a project, or two of them at once (read from the rows), exactly', async () => {
    const cases: [string, (row: RequestRecord) => boolean][] = [
      [`key_id=${org.keys[0]}`, (r) => r.key_id === org.keys[0]],
      [`model_alias=anthropic/claude-sonnet-4`, (r) => r.model === 'anthropic/claude-sonnet-4'],
      [`project_id=${org.projects[1]}`, (r) => r.project_id === org.projects[1]],
      // A key and its own project: the key's cells.
      [`project_id=${org.projects[0]}&key_id=${org.keys[0]}`, (r) => r.key_id === org.keys[0]],
      [
        `project_id=${org.projects[0]}&model_alias=svc/fast`,
        (r) => r.project_id === org.projects[0] && r.model === 'svc/fast',
      ],
    ];
    for (const [query, inScope] of cases) {
      const answer = await org.client.get(`/analytics/dashboard?time_range=3d&interval=6h&${query}`);
      expect(answer.status, query).toBe(200);
      expectExact(answer.body, rows, inScope);
      expectCache(answer.body, rows, inScope);
    }
    // A key and a project it is not in: nothing.
    const none = await org.client.get(
      `/analytics/dashboard?time_range=3d&interval=6h&project_id=${org.projects[1]}&key_id=${org.keys[0]}`,
    );
    expect(none.body.buckets.every((b: Bucket) => b.requests === 0 && b.latency_ms === null)).toBe(true);
    expect(none.body.cache).toEqual([]);
  });

  it('reads a short window in fine buckets, edges included', async () => {
    const answer = await org.client.get('/analytics/dashboard?time_range=1h&interval=1m');
    expect(answer.status).toBe(200);
    expect(answer.body.buckets).toHaveLength(61);
    expectExact(answer.body, rows, everything);
  });

  it('gives the prompt cache by model: the share read from it and what it saved, unknown where a route has none', async () => {
    const body = (await org.client.get('/analytics/dashboard?time_range=7d')).body;
    const window = rows.filter((r) => r.ts >= NOW - 7 * DAY && r.ts <= NOW);
    const byModel = new Map(body.cache.map((c: { model: string }) => [c.model, c]));
    expect([...byModel.keys()].sort()).toEqual([...new Set(window.map((r) => r.model))].sort());
    for (const model of MODELS) {
      const mine = window.filter((r) => r.model === model);
      const read = sum(mine, (r) => r.cache_read_input_tokens ?? 0);
      // The share is that of the rows whose prompt count is known (a tenth of these have none).
      const knownRead = sum(mine, (r) => (r.prompt_tokens === null ? 0 : (r.cache_read_input_tokens ?? 0)));
      const prompt = promptOf(mine)!;
      const got = byModel.get(model) as Record<string, unknown>;
      expect(got.prompt_tokens, model).toBe(prompt);
      if (model === 'svc/fast') {
        expect(got).toMatchObject({
          cache_read_tokens: null,
          cache_write_tokens: null,
          hit_share: null,
          saved_micro: null,
        });
      } else {
        expect(got.cache_read_tokens, model).toBe(read);
        expect(got.hit_share as number, model).toBeCloseTo(knownRead / prompt, 12);
        expect(knownRead).toBeLessThan(read);
      }
    }
    // GPT-4o mini: 42 micro-PKR a prompt token, 21 from the cache.
    const mini = window.filter((r) => r.model === 'openai/gpt-4o-mini');
    expect((byModel.get('openai/gpt-4o-mini') as { saved_micro: number }).saved_micro).toBe(
      sum(mini, (r) => r.cache_read_input_tokens ?? 0) * 21,
    );
  });

  it('gives no share for a model whose requests all lack a prompt count, and still what the cache saved', () => {
    const sums = { prompt_tokens: 0, prompt_rows: 0, cache_read: 100, cache_write: 5, cache_rows: 3 };
    const price = { input: 42, output: 168, cache_write: 42, cache_read: 21 };
    expect(cacheJson({ model: 'openai/gpt-4o-mini', ...sums, known_read: 0, known_write: 0 }, price)).toEqual({
      model: 'openai/gpt-4o-mini',
      prompt_tokens: null,
      cache_read_tokens: 100,
      cache_write_tokens: 5,
      hit_share: null,
      saved_micro: 2100,
    });
  });

  it('refuses an interval that cuts across days, or too many buckets, naming the parameter', async () => {
    for (const query of ['interval=7m', 'interval=1s&time_range=30d']) {
      const answer = await org.client.get(`/analytics/dashboard?${query}`);
      expect(answer.status, query).toBe(400);
      expect(answer.body.error, query).toMatch(/^interval /);
    }
  });
});
