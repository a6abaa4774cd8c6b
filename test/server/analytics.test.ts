import fc from 'fast-check';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { modelsOf } from '../../server/domain/route-models.js';
import { recordRequests } from '../../server/ingest/record-requests.js';
import { REQUEST_APIS, type Attempt, type RequestApi } from '../../server/schemas/request-log.js';
import type { RequestRecord } from '../../server/stores/telemetry/request-record.js';
import * as ref from './analytics-reference.js';
import { register, startServer, TestClient, type TestServer, requestLog } from './harness.js';

/** The server's clock is frozen here, so windows and their edges are exact. */
const FIXED_NOW = Date.UTC(2026, 10, 22, 7, 49, 19, 123);
const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

let server: TestServer;
/** Another organisation whose rows are loaded into every run and must never show. */
let stranger: { client: TestClient; orgId: string; projectId: string; keyId: string };

beforeAll(async () => {
  server = await startServer({ now: () => FIXED_NOW });
  const org = await freshOrg();
  stranger = { client: org.client, orgId: org.orgId, projectId: org.p1, keyId: org.keyA };
});
afterAll(() => server?.close());

// ---------------------------------------------------------------------------------------
// Setting up organisations and loading rows
// ---------------------------------------------------------------------------------------

interface Org {
  client: TestClient;
  orgId: string;
  /** Default project and a second one. */
  p1: string;
  p2: string;
  keyA: string;
  keyB: string;
  /** A key of p1 that was revoked after use. */
  revoked: string;
  names: ref.Names;
}

/** A new organisation: two projects, keys `alpha` (p1) and `beta` (p2), and a revoked key. */
async function freshOrg(): Promise<Org> {
  const { client, org } = await register(server);
  const orgId = (await server.app.control.organizations.findByName(org))!.id;
  const p1: string = (await client.get('/projects')).body.projects[0].id;
  const p2 = (await server.app.control.write((tx) => tx.organizations.addProject(orgId, 'Second', FIXED_NOW))).id;
  const create = async (project_id: string, name: string) => {
    const answer = await client.post('/keys', { project_id, name });
    expect(answer.status, JSON.stringify(answer.body)).toBe(201);
    return answer.body.id as string;
  };
  const keyA = await create(p1, 'alpha key');
  const keyB = await create(p2, 'beta key');
  const revoked = await create(p1, 'revoked key');
  expect((await client.delete(`/keys/${revoked}`)).status).toBe(200);
  return {
    client,
    orgId,
    p1,
    p2,
    keyA,
    keyB,
    revoked,
    names: {
      keys: new Map([
        [keyA, 'alpha key'],
        [keyB, 'beta key'],
      ]),
      projects: new Map([
        [p1, 'Default'],
        [p2, 'Second'],
      ]),
    },
  };
}

async function load(records: RequestRecord[]): Promise<void> {
  await recordRequests(server.app.control, requestLog(server), records);
}

// ---------------------------------------------------------------------------------------
// Random rows
// ---------------------------------------------------------------------------------------

type Who = 'none' | 'projectOnly' | 'A' | 'B' | 'revoked' | 'ghost' | 'stranger';
const MODELS = ['openai/gpt-4o-mini', 'anthropic/claude-sonnet-4', 'svc/llama-3.1-70b', 'svc/Mixed-Case'];
const REASONS = ['success', 'proxy_guillotine', 'client_disconnect', 'upstream_stream_aborted'];
const STATUSES = [200, 201, 204, 299, 301, 304, 400, 401, 404, 429, 499, 500, 502, 503, 599];
/** Words metadata values are made of, and that searches look for: mixed case and unicode. */
const WORDS = [
  'Acme Corp',
  'ÜBER-Kunde',
  'straße',
  'İstanbul',
  'ΟΔΟΣ',
  'café',
  '日本語',
  'Trace-AbC123',
  'checkout',
  '😀x',
];
const META_KEYS = ['customer', 'feature', 'trace_id', 'région', 'ünï-key'];
/** Only in user agents, models and upstream models: a search for them must not match there. */
const ELSEWHERE = ['Mozilla/5.0 (Linux)', 'python-httpx/0.27', 'gpt-4o-mini-2024-07-18', 'ELSEWHERE-only'];

interface RowSpec {
  who: Who;
  offset: number;
  model: string;
  status: number;
  stream: boolean;
  totalMs: number;
  /** When the row is streamed: null (first token not flushed) or a share of total_ms; a few exact edge values. */
  ttft: number | null | 'total' | 'over';
  tpot: number | null;
  preDispatchMs: number;
  promptTokens: number | null;
  tokensGenerated: number;
  cacheCreation: number | null;
  cacheRead: number | null;
  totalTokens: number;
  estimated: boolean;
  costMicro: number;
  byok: boolean;
  reason: string;
  upstreamError: string | null;
  upstreamModel: string | null;
  servedBy: string | null;
  attempts: Attempt[] | null;
  api: RequestApi | null;
  userAgent: string;
  metadata: [string, string][];
  idPart: string;
}

/**
 * Non-negative milliseconds: round values, binary fractions and arbitrary doubles. Below a
 * nanosecond they are 0: a generation time of 5e-324 ms would make an infinite rate.
 */
const ms = fc.oneof(
  fc.integer({ min: 0, max: 120_000 }),
  fc.integer({ min: 0, max: 1_000_000 }).map((n) => n / 8),
  fc.double({ min: 0, max: 120_000, noNaN: true, noDefaultInfinity: true }).map((x) => (x < 1e-6 ? 0 : x)),
);
const maybe = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: null, freq: 2 });

/** Row times: exactly at, and one millisecond either side of, the edges of the windows queried. */
function offsetArb(rangesMs: number[]): fc.Arbitrary<number> {
  const edges = [0, 1, -1, 5 * SECOND, ...rangesMs.flatMap((r) => [-r, -r - 1, -r + 1])];
  // A window may end after now (a negative reach): the spans below are over those reaching back.
  const back = rangesMs.filter((r) => r > 0);
  const widest = Math.max(1, ...back);
  return fc.oneof(
    fc.constantFrom(...edges),
    fc.integer({ min: -Math.min(widest, 401 * DAY), max: 0 }),
    fc.integer({ min: -Math.min(widest, ...back), max: 0 }),
    fc.integer({ min: -402 * DAY, max: 2 * SECOND }),
  );
}

/** Attempts as a gateway or an import stores them; their order and every field come back through the API. */
const attemptArb: fc.Arbitrary<Attempt> = fc.record({
  target: fc.constantFrom('openai/gpt-4o-mini-2024-07-18', 'azure/gpt-4o-mini', 'Ω/日本語'),
  status: maybe(fc.constantFrom(200, 429, 500, 503)),
  error: maybe(fc.constantFrom('first_byte_timeout', 'server_error', 'rate_limited', 'reset')),
  ms,
  decision: fc.constantFrom<Attempt['decision']>('served', 'retried', 'next', 'gave_up', 'skipped'),
});

function rowArb(rangesMs: number[]): fc.Arbitrary<RowSpec> {
  return fc.record({
    who: fc.constantFrom<Who>('none', 'projectOnly', 'A', 'A', 'B', 'B', 'revoked', 'ghost', 'stranger'),
    offset: offsetArb(rangesMs),
    model: fc.constantFrom(...MODELS),
    status: fc.constantFrom(...STATUSES),
    stream: fc.boolean(),
    totalMs: ms,
    ttft: fc.oneof(
      fc.constant(null),
      fc.constantFrom<'total' | 'over'>('total', 'over'),
      fc.double({ min: 0, max: 1, noNaN: true }),
    ),
    tpot: maybe(ms),
    preDispatchMs: fc.oneof(ms, fc.constant(0)),
    promptTokens: maybe(fc.integer({ min: 0, max: 100_000 })),
    tokensGenerated: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 20_000 })),
    cacheCreation: maybe(fc.integer({ min: 0, max: 50_000 })),
    cacheRead: maybe(fc.integer({ min: 0, max: 50_000 })),
    totalTokens: fc.integer({ min: 0, max: 200_000 }),
    estimated: fc.boolean(),
    costMicro: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 5_000_000 }), fc.constantFrom(1, 999_999, 1_000_000)),
    byok: fc.boolean(),
    reason: fc.constantFrom(...REASONS),
    upstreamError: maybe(fc.constantFrom('rate limited', 'Upstream 502: bad gateway')),
    upstreamModel: maybe(fc.constantFrom(...ELSEWHERE)),
    servedBy: maybe(fc.constantFrom('openai/gpt-4o-mini-2024-07-18', 'together/meta-llama/Llama-3.1-8B')),
    attempts: maybe(fc.array(attemptArb, { minLength: 1, maxLength: 4 })),
    api: maybe(fc.constantFrom(...REQUEST_APIS)),
    userAgent: fc.constantFrom(...ELSEWHERE, 'Acme Corp client/1.0'),
    metadata: fc.uniqueArray(
      fc.tuple(
        fc.constantFrom(...META_KEYS),
        fc.array(fc.constantFrom(...WORDS), { minLength: 1, maxLength: 3 }).map((w) => w.join(' ')),
      ),
      { maxLength: 3, selector: ([key]) => key },
    ),
    idPart: fc.constantFrom('a', 'B', 'Ω', 'ß', 'Trace', 'zz', 'İd', '日'),
  });
}

let runCounter = 0;

/** Turns abstract rows into stored records of `org` (and of the stranger organisation). */
function materialise(org: Org, specs: RowSpec[]): RequestRecord[] {
  runCounter++;
  const ghostKey = randomUUID();
  const ghostProject = randomUUID();
  return specs.map((spec, i) => {
    const attribution: Record<Who, [string, string | null, string | null]> = {
      none: [org.orgId, null, null],
      projectOnly: [org.orgId, org.p2, null],
      A: [org.orgId, org.p1, org.keyA],
      B: [org.orgId, org.p2, org.keyB],
      revoked: [org.orgId, org.p1, org.revoked],
      ghost: [org.orgId, ghostProject, ghostKey],
      stranger: [stranger.orgId, stranger.projectId, stranger.keyId],
    };
    const [orgId, projectId, keyId] = attribution[spec.who];
    const ttft =
      !spec.stream || spec.ttft === null
        ? null
        : spec.ttft === 'total'
          ? spec.totalMs
          : spec.ttft === 'over'
            ? spec.totalMs + 1
            : spec.ttft * spec.totalMs;
    return {
      // Mixed case and unicode, unique across the whole run of the file.
      req_id: `Req-${process.pid}-${runCounter}-${i}-${spec.idPart}`,
      ts: FIXED_NOW + spec.offset,
      org_id: orgId,
      project_id: projectId,
      key_id: keyId,
      model: spec.model,
      status: spec.status,
      stream: spec.stream ? 1 : 0,
      total_ms: spec.totalMs,
      ttft_ms: ttft,
      tpot_ms: spec.stream && ttft !== null ? spec.tpot : null,
      pre_dispatch_ms: spec.preDispatchMs,
      prompt_tokens: spec.promptTokens,
      tokens_generated: spec.tokensGenerated,
      cache_creation_input_tokens: spec.model.startsWith('svc/') ? null : spec.cacheCreation,
      cache_read_input_tokens: spec.model.startsWith('svc/') ? null : spec.cacheRead,
      total_tokens: spec.totalTokens,
      tokens_estimated: spec.estimated ? 1 : 0,
      cost_micro: spec.costMicro,
      is_byok: spec.byok ? 1 : 0,
      termination_reason: spec.reason,
      upstream_error: spec.upstreamError,
      upstream_model: spec.upstreamModel,
      served_by: spec.servedBy,
      attempts: spec.attempts && JSON.stringify(spec.attempts),
      api: spec.api,
      user_agent: spec.userAgent,
      metadata: JSON.stringify(Object.fromEntries(spec.metadata)),
    };
  });
}

// ---------------------------------------------------------------------------------------
// Random filters
// ---------------------------------------------------------------------------------------

const timeRangeArb: fc.Arbitrary<string | undefined> = fc.oneof(
  fc.constantFrom(undefined, '1m', '90s', '45m', '1h', '6h', '24h', '2d', '7d', '30d', '400d'),
  fc.tuple(fc.integer({ min: 1, max: 400 }), fc.constantFrom('s', 'm', 'h', 'd')).map(([n, unit]) => `${n}${unit}`),
);
const rangeMs = (text: string | undefined) => ref.durationMs(text ?? '24h');

interface CommonFilter {
  time_range: string | undefined;
  project: 'p1' | 'p2' | undefined;
  key: 'keyA' | 'keyB' | undefined;
  model: string | undefined;
  /** Beyond the contract: the gateway's API the rows came in on. */
  api: RequestApi | undefined;
}

/** Mostly omitted, so that combined filters still leave rows to compare. */
const sometimes = <T>(arb: fc.Arbitrary<T>): fc.Arbitrary<T | undefined> =>
  fc.oneof({ weight: 3, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: arb });

const commonArb: fc.Arbitrary<CommonFilter> = fc.record({
  time_range: timeRangeArb,
  project: sometimes(fc.constantFrom('p1' as const, 'p2' as const)),
  key: sometimes(fc.constantFrom('keyA' as const, 'keyB' as const)),
  model: sometimes(fc.constantFrom(...MODELS, 'openai/unknown-model')),
  api: sometimes(fc.constantFrom(...REQUEST_APIS)),
});

function windowOf(org: Org, f: CommonFilter): ref.Window {
  return {
    orgId: org.orgId,
    now: FIXED_NOW,
    rangeMs: rangeMs(f.time_range),
    ...(f.project ? { projectId: org[f.project] } : {}),
    ...(f.key ? { keyId: org[f.key] } : {}),
    ...(f.model ? { model: f.model } : {}),
    ...(f.api ? { api: f.api } : {}),
  };
}

/** The routes document's models of a provider, as the server's own document says. */
const providerModels = async (provider: string) =>
  modelsOf((await server.app.control.routes.current()).document)
    .filter((model) => model.provider === provider)
    .map((model) => model.id);

function query(params: Record<string, string | number | undefined>): string {
  const parts = Object.entries(params)
    .filter(([, value]) => value !== undefined)
    .map(([name, value]) => `${name}=${encodeURIComponent(String(value))}`);
  return parts.length === 0 ? '' : `?${parts.join('&')}`;
}

function commonParams(org: Org, f: CommonFilter, modelParam: 'model_alias' | 'model') {
  return {
    time_range: f.time_range,
    project_id: f.project && org[f.project],
    key_id: f.key && org[f.key],
    [modelParam]: f.model,
    api: f.api,
  };
}

function expectClose(actual: unknown, expected: number | null | undefined, what: string): void {
  expect(
    ref.closeTo(actual as number | null | undefined, expected),
    `${what}: got ${String(actual)}, expected ${String(expected)}`,
  ).toBe(true);
}

function expectSeries(actual: ref.SeriesRow[], expected: ref.SeriesRow[], metric: ref.Metric): void {
  expect(actual.map((p) => [p.bucket, p.group])).toEqual(expected.map((p) => [p.bucket, p.group]));
  expected.forEach((point, i) => {
    if (metric === 'volume' || metric === 'token_usage') expect(actual[i]!.value).toBe(point.value);
    else expectClose(actual[i]!.value, point.value, `${metric} at ${point.bucket} ${point.group}`);
  });
}

// ---------------------------------------------------------------------------------------
// Properties
// ---------------------------------------------------------------------------------------

interface SeriesAsk {
  metric: ref.Metric | undefined;
  group_by: ref.GroupBy | undefined;
  interval: string | undefined;
}

const intervalArb: fc.Arbitrary<string | undefined> = fc.oneof(
  fc.constant(undefined),
  fc.constantFrom('1s', '7s', '30s', '1m', '7m', '15m', '1h', '5h', '1d', '3d', '7d', '400d'),
  fc.tuple(fc.integer({ min: 1, max: 500 }), fc.constantFrom('s', 'm', 'h', 'd')).map(([n, unit]) => `${n}${unit}`),
);

const seriesAskArb: fc.Arbitrary<SeriesAsk> = fc.record({
  metric: fc.constantFrom(undefined, ...ref.METRICS),
  group_by: fc.constantFrom(undefined, ...ref.GROUP_BYS),
  interval: intervalArb,
});

const summaryCaseArb = fc
  .array(fc.record({ filter: commonArb, series: fc.array(seriesAskArb, { minLength: 1, maxLength: 4 }) }), {
    minLength: 1,
    maxLength: 3,
  })
  .chain((asks) =>
    fc.tuple(
      fc.constant(asks),
      fc.array(rowArb(asks.map((a) => rangeMs(a.filter.time_range))), { minLength: 0, maxLength: 40 }),
    ),
  );

describe('summary, timeseries and last_used_at agree with the reference', () => {
  it('for random rows and random filters', async () => {
    await fc.assert(
      fc.asyncProperty(summaryCaseArb, async ([asks, specs]) => {
        const org = await freshOrg();
        const records = materialise(org, specs);
        await load(records);

        for (const { filter, series } of asks) {
          const w = windowOf(org, filter);
          const summary = await org.client.get(`/analytics/summary${query(commonParams(org, filter, 'model_alias'))}`);
          expect(summary.status, JSON.stringify(summary.body)).toBe(200);
          const expected = ref.summary(records, w);
          expect(summary.body.time_range).toBe(filter.time_range ?? '24h');
          expect(summary.body.total_requests).toBe(expected.total_requests);
          expect(summary.body.total_token_usage).toBe(expected.total_token_usage);
          expectClose(summary.body.avg_e2e_latency_ms, expected.avg_e2e_latency_ms, 'avg_e2e_latency_ms');
          expectClose(summary.body.avg_ttft_ms, expected.avg_ttft_ms, 'avg_ttft_ms');
          expectClose(summary.body.avg_tokens_per_sec, expected.avg_tokens_per_sec, 'avg_tokens_per_sec');
          if (filter.key) expect(summary.body.total_cost_pkr).toBe(expected.total_cost_pkr);
          else expect(summary.body).not.toHaveProperty('total_cost_pkr');

          for (const ask of series) {
            const answer = await org.client.get(
              `/analytics/timeseries${query({ ...commonParams(org, filter, 'model_alias'), ...ask })}`,
            );
            expect(answer.status, JSON.stringify(answer.body)).toBe(200);
            const metric = ask.metric ?? 'volume';
            expect(answer.body).toMatchObject({
              metric,
              group_by: ask.group_by ?? null,
              time_range: filter.time_range ?? '24h',
            });
            if (ask.interval !== undefined) expect(answer.body.interval).toBe(ask.interval);
            else {
              // The default width gives 60 to 120 buckets over a window of a minute or more.
              const buckets = w.rangeMs / ref.durationMs(answer.body.interval);
              expect(buckets).toBeLessThanOrEqual(120);
              if (w.rangeMs >= MINUTE) expect(buckets).toBeGreaterThanOrEqual(60);
            }
            const intervalMs = ref.durationMs(answer.body.interval);
            expectSeries(
              answer.body.data,
              ref.timeseries(records, w, metric, intervalMs, ask.group_by ?? null),
              metric,
            );
          }
        }

        const keys = await org.client.get('/keys');
        expect(keys.status).toBe(200);
        const lastUsed = Object.fromEntries(keys.body.keys.map((k: any) => [k.id, k.last_used_at]));
        expect(lastUsed).toEqual({
          [org.keyA]: ref.lastUsed(records, org.keyA),
          [org.keyB]: ref.lastUsed(records, org.keyB),
        });
      }),
      { numRuns: 50 },
    );
  }, 60_000);

  it('choose a default interval of 60 to 120 buckets for any window of a minute or more', async () => {
    const org = await freshOrg();
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          timeRangeArb,
          fc.integer({ min: 60, max: 400 * 86_400 }).map((s) => `${s}s`),
          fc.integer({ min: 1, max: 400 * 1440 }).map((m) => `${m}m`),
        ),
        async (timeRange) => {
          const answer = await org.client.get(`/analytics/timeseries${query({ time_range: timeRange })}`);
          expect(answer.status, JSON.stringify(answer.body)).toBe(200);
          const buckets = rangeMs(timeRange) / ref.durationMs(answer.body.interval);
          expect(buckets).toBeLessThanOrEqual(120);
          if (rangeMs(timeRange) >= MINUTE)
            expect(buckets, `${timeRange} → ${answer.body.interval}`).toBeGreaterThanOrEqual(60);
        },
      ),
      { numRuns: 150, examples: [['241s'], ['299s'], ['250m'], ['4h'], ['5h'], ['400d'], ['1m'], ['59s']] },
    );
  });
});

interface LogAsk {
  filter: CommonFilter;
  status_category: ref.StatusCategory | undefined;
  termination_reason: string | undefined;
  min_cost: { kind: 'none' } | { kind: 'value'; pkr: number } | { kind: 'row'; index: number; delta: number };
  search: string | undefined;
  limit: number | undefined;
  offset: number | undefined;
  /** Beyond the contract: `from`/`to` instead of time_range, as milliseconds before FIXED_NOW. */
  between: { fromAgo: number; toAgo: number } | undefined;
  /** Beyond the contract: the catalogue's models of one provider. */
  provider: string | undefined;
}

const caseOf = (text: string, how: 'upper' | 'lower' | 'same' | 'swap') =>
  how === 'upper'
    ? text.toUpperCase()
    : how === 'lower'
      ? text.toLowerCase()
      : how === 'same'
        ? text
        : [...text].map((c, i) => (i % 2 ? c.toUpperCase() : c.toLowerCase())).join('');

const searchArb: fc.Arbitrary<string | undefined> = fc.oneof(
  { weight: 4, arbitrary: fc.constant(undefined) },
  // A piece of a metadata word, key or request id, in another case.
  fc
    .tuple(
      fc.constantFrom(...WORDS, ...META_KEYS, 'req-', 'Ω', 'ß', 'İd', 'trace'),
      fc.nat(),
      fc.nat(),
      fc.constantFrom<'upper' | 'lower' | 'same' | 'swap'>('upper', 'lower', 'same', 'swap'),
    )
    .map(([word, a, b, how]) => {
      const chars = [...word];
      const start = a % chars.length;
      const end = start + 1 + (b % (chars.length - start));
      return caseOf(chars.slice(start, end).join(''), how);
    }),
  // Text found only outside request ids and metadata: must match nothing there.
  fc.constantFrom(...ELSEWHERE, 'gpt-4o', 'Mozilla', 'Acme Corp client'),
  fc.string({ unit: 'grapheme', minLength: 1, maxLength: 3 }),
);

const logAskArb: fc.Arbitrary<LogAsk> = fc.record({
  filter: commonArb,
  status_category: sometimes(fc.constantFrom<ref.StatusCategory>('2xx', '3xx', '4xx', '5xx')),
  termination_reason: sometimes(fc.constantFrom(...REASONS, 'not_a_reason', 'SUCCESS')),
  min_cost: fc.oneof(
    { weight: 3, arbitrary: fc.constant({ kind: 'none' as const }) },
    fc.record({ kind: fc.constant('value' as const), pkr: fc.constantFrom(0, 0.000001, 0.5, 1, 2.5, 1e20) }),
    fc.record({
      kind: fc.constant('row' as const),
      index: fc.nat(),
      delta: fc.constantFrom(0, 1e-7, -1e-7, 1e-6, -1e-6),
    }),
  ),
  search: searchArb,
  limit: fc.oneof(fc.constant(undefined), fc.integer({ min: 1, max: 12 }), fc.integer({ min: 1, max: 300 })),
  offset: fc.oneof(fc.constant(undefined), fc.integer({ min: 0, max: 5 }), fc.integer({ min: 0, max: 60 })),
  between: sometimes(
    fc
      .tuple(
        fc.oneof(fc.constantFrom(-SECOND, 0, 1, MINUTE, HOUR + 7), fc.integer({ min: 0, max: 2 * DAY })),
        fc.oneof(fc.constantFrom(1, 5 * MINUTE, HOUR, DAY, 400 * DAY), fc.integer({ min: 1, max: 30 * DAY })),
      )
      .map(([toAgo, span]) => ({ fromAgo: toAgo + span, toAgo })),
  ),
  // 'svc' names catalogue models none of the rows use: its svc/ rows are models it does not know.
  provider: sometimes(fc.constantFrom('openai', 'anthropic', 'svc')),
});

/** The windows an ask reads, as milliseconds back from FIXED_NOW: rows are put on their edges. */
const reachesOf = (ask: LogAsk) =>
  ask.between ? [ask.between.fromAgo, ask.between.toAgo] : [rangeMs(ask.filter.time_range)];

const logCaseArb = fc
  .array(logAskArb, { minLength: 1, maxLength: 4 })
  .chain((asks) =>
    fc.tuple(fc.constant(asks), fc.array(rowArb(asks.flatMap(reachesOf)), { minLength: 0, maxLength: 60 })),
  );

/** The window and filters an ask gives the reference: `from` included and `to` excluded when between. */
function logWindowOf(org: Org, ask: LogAsk): ref.Window {
  const window = windowOf(org, ask.filter);
  if (!ask.between) return window;
  const last = FIXED_NOW - ask.between.toAgo - 1;
  return { ...window, now: last, rangeMs: last - (FIXED_NOW - ask.between.fromAgo) };
}

describe('the request log agrees with the reference', () => {
  it('for random rows, random filters and random pages', async () => {
    await fc.assert(
      fc.asyncProperty(logCaseArb, async ([asks, specs]) => {
        const org = await freshOrg();
        const records = materialise(org, specs);
        await load(records);

        for (const ask of asks) {
          let minCostPkr: number | undefined;
          if (ask.min_cost.kind === 'value') minCostPkr = ask.min_cost.pkr;
          if (ask.min_cost.kind === 'row' && records.length > 0) {
            const cost = records[ask.min_cost.index % records.length]!.cost_micro / 1_000_000;
            minCostPkr = Math.max(0, cost + ask.min_cost.delta);
          }
          const instant = (ago: number) => new Date(FIXED_NOW - ago).toISOString();
          const params = {
            ...commonParams(org, ask.filter, 'model'),
            ...(ask.between
              ? { time_range: undefined, from: instant(ask.between.fromAgo), to: instant(ask.between.toAgo) }
              : {}),
            provider: ask.provider,
            status_category: ask.status_category,
            termination_reason: ask.termination_reason,
            min_cost_pkr: minCostPkr,
            search: ask.search,
            limit: ask.limit,
            offset: ask.offset,
          };
          const answer = await org.client.get(`/analytics/requests${query(params)}`);
          expect(answer.status, JSON.stringify(answer.body)).toBe(200);

          const limit = Math.min(ask.limit ?? 50, 200);
          const offset = ask.offset ?? 0;
          const expected = ref.requestPage(
            records,
            {
              ...logWindowOf(org, ask),
              ...(ask.provider ? { models: await providerModels(ask.provider) } : {}),
              ...(ask.status_category ? { statusCategory: ask.status_category } : {}),
              ...(ask.termination_reason ? { terminationReason: ask.termination_reason } : {}),
              ...(minCostPkr === undefined ? {} : { minCostPkr }),
              ...(ask.search ? { search: ask.search } : {}),
            },
            limit,
            offset,
            org.names,
          );
          expect(answer.body.limit).toBe(limit);
          expect(answer.body.offset).toBe(offset);
          expect(answer.body.total).toBe(expected.total);
          expect(answer.body.requests).toEqual(expected.requests);
        }
      }),
      { numRuns: 70 },
    );
  }, 60_000);
});

// ---------------------------------------------------------------------------------------
// Examples
// ---------------------------------------------------------------------------------------

/** A plain row of `org` at `FIXED_NOW + offset`; fields overridable. */
function record(org: Org, offset: number, extra: Partial<RequestRecord> = {}): RequestRecord {
  runCounter++;
  return {
    req_id: `req-example-${process.pid}-${runCounter}`,
    ts: FIXED_NOW + offset,
    org_id: org.orgId,
    project_id: org.p1,
    key_id: org.keyA,
    model: 'openai/gpt-4o-mini',
    status: 200,
    stream: 0,
    total_ms: 400,
    ttft_ms: null,
    tpot_ms: null,
    pre_dispatch_ms: 10,
    prompt_tokens: 30,
    tokens_generated: 50,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: 0,
    total_tokens: 80,
    tokens_estimated: 0,
    cost_micro: 250_000,
    is_byok: 0,
    termination_reason: 'success',
    upstream_error: null,
    upstream_model: 'gpt-4o-mini-2024-07-18',
    served_by: null,
    attempts: null,
    api: 'chat',
    user_agent: 'analytics-test/1.0',
    metadata: '{}',
    ...extra,
  };
}

describe('paging through the request log', () => {
  it('walking offset through total yields every matching row exactly once, newest first', async () => {
    const org = await freshOrg();
    const records: RequestRecord[] = [];
    for (let i = 0; i < 230; i++) {
      // Groups of equal times, so that ties are ordered by req_id; every fifth row is an error.
      records.push(
        record(org, -Math.floor(i / 3) * MINUTE, {
          req_id: `page-${org.orgId.slice(0, 8)}-${String.fromCharCode(97 + (i % 26))}-${i}`,
          status: i % 5 === 0 ? 500 : 200,
          key_id: i % 2 ? org.keyA : org.keyB,
        }),
      );
    }
    await load(records);
    const filter: ref.LogFilter = { orgId: org.orgId, now: FIXED_NOW, rangeMs: DAY, statusCategory: '2xx' };
    const expected = ref.requestLog(records, filter).map((row) => row.req_id);
    expect(expected).toHaveLength(184);

    for (const limit of [1, 7, 200]) {
      const seen: string[] = [];
      const times: number[] = [];
      for (let offset = 0; ; offset += limit) {
        const page = await org.client.get(`/analytics/requests?status_category=2xx&limit=${limit}&offset=${offset}`);
        expect(page.status).toBe(200);
        expect(page.body).toMatchObject({ total: 184, limit, offset });
        seen.push(...page.body.requests.map((r: any) => r.req_id));
        times.push(...page.body.requests.map((r: any) => Date.parse(r.timestamp)));
        if (offset + limit >= page.body.total) {
          expect(page.body.requests).toHaveLength(page.body.total - offset);
          break;
        }
        expect(page.body.requests).toHaveLength(limit);
      }
      expect(seen).toEqual(expected);
      expect(new Set(seen).size).toBe(184);
      expect(times).toEqual([...times].sort((a, b) => b - a));
    }
    const beyond = await org.client.get('/analytics/requests?status_category=2xx&offset=184');
    expect(beyond.body).toEqual({ total: 184, limit: 50, offset: 184, requests: [] });
  });

  it('clamps limit to 200 and defaults to 50 from offset 0', async () => {
    const org = await freshOrg();
    await load(Array.from({ length: 210 }, (_, i) => record(org, -i * SECOND)));
    const clamped = await org.client.get('/analytics/requests?limit=500');
    expect(clamped.status).toBe(200);
    expect(clamped.body.limit).toBe(200);
    expect(clamped.body.requests).toHaveLength(200);
    expect(clamped.body.total).toBe(210);
    const defaults = await org.client.get('/analytics/requests');
    expect(defaults.body).toMatchObject({ total: 210, limit: 50, offset: 0 });
    expect(defaults.body.requests).toHaveLength(50);
  });
});

describe('parameter errors', () => {
  let org: Org;
  let other: Org;
  beforeAll(async () => {
    org = await freshOrg();
    other = await freshOrg();
  });

  const endpoints = ['/analytics/summary', '/analytics/timeseries', '/analytics/requests'];

  it('answers 400 naming time_range or interval when malformed or longer than 400d', async () => {
    for (const path of endpoints) {
      for (const bad of ['24', 'h', '0h', '01h', '1w', '1.5h', '-1h', '24 h', '1H', '401d', '9601h', '34560001s']) {
        const answer = await org.client.get(`${path}?time_range=${encodeURIComponent(bad)}`);
        expect(answer.status, `${path} ${bad}`).toBe(400);
        expect(answer.body.error).toContain('time_range');
      }
      const edge = await org.client.get(`${path}?time_range=400d`);
      expect(edge.status).toBe(200);
      expect(edge.body.time_range ?? '400d').toBe('400d');
    }
    for (const bad of ['5', 'm', '0m', '05m', '1.5m', '1y', ' 5m']) {
      const answer = await org.client.get(`/analytics/timeseries?interval=${encodeURIComponent(bad)}`);
      expect(answer.status, bad).toBe(400);
      expect(answer.body.error).toContain('interval');
    }
    const throttling = await org.client.get('/admin/usage-throttling?time_range=401d');
    expect(throttling.status).toBe(400);
    expect(throttling.body.error).toContain('time_range');
  });

  it('answers 400 to an unknown metric, group_by or status_category', async () => {
    for (const path of ['metric=p99', 'metric=VOLUME', 'group_by=org', 'group_by=Key']) {
      const answer = await org.client.get(`/analytics/timeseries?${path}`);
      expect(answer.status, path).toBe(400);
      expect(answer.body).toEqual({ error: expect.any(String) });
    }
    for (const bad of ['2XX', '200', '6xx', 'xx', '2xx,4xx']) {
      const answer = await org.client.get(`/analytics/requests?status_category=${bad}`);
      expect(answer.status, bad).toBe(400);
      expect(answer.body).toEqual({ error: expect.any(String) });
    }
  });

  it('answers 400 to a window between two instants that is half given, reversed, empty, too long or beside time_range', async () => {
    const at = (ago: number) => new Date(FIXED_NOW - ago).toISOString();
    const cases: [string, string][] = [
      [`from=${at(HOUR)}`, 'from needs to'],
      [`to=${at(0)}`, 'to needs from'],
      [`from=${at(0)}&to=${at(HOUR)}`, 'to must be after from'],
      [`from=${at(HOUR)}&to=${at(HOUR)}`, 'to must be after from'],
      [`from=${at(401 * DAY)}&to=${at(0)}`, 'at most 400d'],
      [`time_range=1h&from=${at(HOUR)}&to=${at(0)}`, 'not both'],
      ['provider=nobody', 'provider'],
      // date-time forms the schema admits and Date.parse cannot read.
      [`from=2026-11-22T07:00:00%2B05&to=${at(0)}`, 'from is not a time'],
      [`from=${at(HOUR)}&to=2026-11-22T23:59:60Z`, 'to is not a time'],
    ];
    for (const [params, message] of cases) {
      const answer = await org.client.get(`/analytics/requests?${params}`);
      expect(answer.status, params).toBe(400);
      expect(answer.body.error, params).toContain(message);
    }
    const longest = await org.client.get(`/analytics/requests?from=${at(400 * DAY)}&to=${at(0)}`);
    expect(longest.status).toBe(200);
    for (const bad of ['from=yesterday&to=2026-11-22T07:00:00Z', 'from=2026-11-22T07:00:00Z&to=2026-13-01T00:00:00Z']) {
      const answer = await org.client.get(`/analytics/requests?${bad}`);
      expect(answer.status, bad).toBe(422);
    }
  });

  it('answers 422 to limit 0, offset -1 and min_cost_pkr -1', async () => {
    for (const bad of ['limit=0', 'limit=-5', 'limit=abc', 'offset=-1', 'min_cost_pkr=-1', 'min_cost_pkr=cheap']) {
      const answer = await org.client.get(`/analytics/requests?${bad}`);
      expect(answer.status, bad).toBe(422);
      expect(answer.body.detail).toEqual([expect.objectContaining({ loc: ['query', bad.split('=')[0]] })]);
    }
  });

  it('treats blank parameters as omitted', async () => {
    await load([record(org, -HOUR), record(org, -2 * DAY), record(org, 0, { key_id: null, project_id: null })]);
    const blanks = (names: string[]) => '?' + names.map((n) => `${n}=`).join('&');
    const common = ['time_range', 'project_id', 'key_id'];
    const summary = await org.client.get(`/analytics/summary${blanks([...common, 'model_alias'])}`);
    expect(summary.status).toBe(200);
    expect(summary.body).toEqual((await org.client.get('/analytics/summary')).body);
    expect(summary.body).toMatchObject({ time_range: '24h', total_requests: 2 });
    const series = await org.client.get(
      `/analytics/timeseries${blanks([...common, 'model_alias', 'metric', 'interval', 'group_by'])}`,
    );
    expect(series.status).toBe(200);
    expect(series.body).toEqual((await org.client.get('/analytics/timeseries')).body);
    expect(series.body).toMatchObject({ metric: 'volume', group_by: null, time_range: '24h', interval: '15m' });
    const page = await org.client.get(
      `/analytics/requests${blanks([...common, 'model', 'status_category', 'termination_reason', 'min_cost_pkr', 'search', 'limit', 'offset'])}`,
    );
    expect(page.status).toBe(200);
    expect(page.body).toEqual((await org.client.get('/analytics/requests')).body);
    expect(page.body).toMatchObject({ total: 2, limit: 50, offset: 0 });
  });

  it('answers 404 with the same body to a project_id or key_id of another organisation, malformed or revoked', async () => {
    const revokedHere = org.revoked;
    const cases = {
      project_id: [other.p1, other.p2, 'not-a-uuid', randomUUID(), `${org.p1}x`],
      key_id: [other.keyA, other.revoked, 'not-a-uuid', randomUUID(), revokedHere],
    };
    for (const path of [...endpoints, '/analytics/timeseries?metric=latency&group_by=key']) {
      for (const [name, values] of Object.entries(cases)) {
        const bodies = new Set<string>();
        for (const value of values) {
          const answer = await org.client.get(`${path}${path.includes('?') ? '&' : '?'}${name}=${value}`);
          expect(answer.status, `${path} ${name}=${value}`).toBe(404);
          bodies.add(JSON.stringify(answer.body));
        }
        expect([...bodies]).toHaveLength(1);
        expect(JSON.parse([...bodies][0]!)).toEqual({ error: expect.any(String) });
      }
    }
    // The owner's own ids work, in any letter case.
    const own = await org.client.get(`/analytics/summary?key_id=${org.keyA.toUpperCase()}&project_id=${org.p1}`);
    expect(own.status).toBe(200);
  });

  it('answers 401 without a session', async () => {
    const anonymous = new TestClient(server.baseUrl);
    for (const path of [...endpoints, '/admin/usage-throttling']) {
      const answer = await anonymous.get(path);
      expect(answer.status).toBe(401);
      expect(answer.body).toEqual({ detail: 'Unauthorized' });
    }
  });

  it('answers promptly to a min_cost_pkr beyond any cost', async () => {
    for (const huge of ['1e20', '1e300', 'Infinity']) {
      const answer = await org.client.get(`/analytics/requests?min_cost_pkr=${huge}`);
      expect(answer.status, huge).toBe(200);
      expect(answer.body.total).toBe(0);
    }
  });
});

describe('timeseries whose buckets hold many rows', () => {
  // The random rows above seldom share a bucket; here every whole bucket of the window holds
  // several rows of different projects, keys (unknown ones too) and models, so a bucket read
  // from rollup cells as wide as the interval must still add up every cell in it.
  it('add up every cell of a bucket, for each filter, group and interval', async () => {
    const org = await freshOrg();
    const who: [string | null, string | null][] = [
      [org.p1, org.keyA],
      [org.p2, org.keyB],
      [org.p1, null],
      [org.p2, null],
      [null, null],
    ];
    // Five rows a few seconds apart every 13 minutes, for five hours; models alternate in pairs.
    const records = Array.from({ length: 120 }, (_, i) => {
      const [projectId, keyId] = who[i % who.length]!;
      return record(org, -(Math.floor(i / 5) * 13 + 1) * MINUTE - (i % 5) * 3 * SECOND, {
        project_id: projectId,
        key_id: keyId,
        model: MODELS[Math.floor(i / 2) % 2]!,
        api: (['chat', 'messages', null] as const)[i % 3]!,
        total_ms: 100 + i,
        total_tokens: 10 * i,
      });
    });
    await load(records);
    const filters: CommonFilter[] = [
      { time_range: '24h', project: undefined, key: undefined, model: undefined, api: undefined },
      { time_range: '24h', project: 'p1', key: undefined, model: undefined, api: undefined },
      { time_range: '24h', project: undefined, key: undefined, model: MODELS[1], api: undefined },
      { time_range: '2d', project: 'p2', key: 'keyB', model: undefined, api: undefined },
      { time_range: '24h', project: 'p1', key: undefined, model: undefined, api: 'messages' },
    ];
    for (const filter of filters) {
      for (const interval of ['5m', '1h', '1d']) {
        for (const group_by of [undefined, ...ref.GROUP_BYS]) {
          for (const metric of ['volume', 'latency', 'token_usage'] as const) {
            const ask = { ...commonParams(org, filter, 'model_alias'), interval, group_by, metric };
            const answer = await org.client.get(`/analytics/timeseries${query(ask)}`);
            expect(answer.status, JSON.stringify(answer.body)).toBe(200);
            const expected = ref.timeseries(
              records,
              windowOf(org, filter),
              metric,
              ref.durationMs(interval),
              group_by ?? null,
            );
            expect(expected.length, JSON.stringify(ask)).toBeGreaterThan(0);
            expectSeries(answer.body.data, expected, metric);
          }
        }
      }
    }
  });
});

describe('figures of a hand-checked example', () => {
  it('gives total_cost_pkr in plain PKR only when key_id is named, and the exact averages', async () => {
    const org = await freshOrg();
    await load([
      // 2 streamed rows: ttft 100 and 300; generation 900 and 700 ms for 50 and 70 tokens.
      record(org, -MINUTE, { stream: 1, total_ms: 1000, ttft_ms: 100, tpot_ms: 10, cost_micro: 1_234_567 }),
      record(org, -2 * MINUTE, { stream: 1, total_ms: 1000, ttft_ms: 300, tokens_generated: 70, cost_micro: 5 }),
      // Non-streamed: generation 400 - 10 = 390 ms for 50 tokens; key B.
      record(org, -3 * MINUTE, { key_id: org.keyB, project_id: org.p2, total_tokens: 20 }),
      // No tokens: counts for latency, not for speed.
      record(org, -4 * MINUTE, { tokens_generated: 0, total_ms: 2000, total_tokens: 0, status: 502, cost_micro: 0 }),
      record(org, -25 * HOUR, { cost_micro: 999_000_000 }),
    ]);
    const all = await org.client.get('/analytics/summary');
    expect(all.body).toEqual({
      time_range: '24h',
      total_requests: 4,
      avg_e2e_latency_ms: (1000 + 1000 + 400 + 2000) / 4,
      avg_ttft_ms: 200,
      avg_tokens_per_sec: ((50 + 70 + 50) * 1000) / (900 + 700 + 390),
      total_token_usage: 80 + 80 + 20 + 0,
    });
    const ofKey = await org.client.get(`/analytics/summary?key_id=${org.keyA}`);
    expect(ofKey.body.total_cost_pkr).toBe(1.234572);
    expect(ofKey.body.total_requests).toBe(3);
    const empty = await org.client.get(`/analytics/summary?key_id=${org.keyB}&time_range=1m`);
    expect(empty.body).toEqual({
      time_range: '1m',
      total_requests: 0,
      avg_e2e_latency_ms: null,
      avg_ttft_ms: null,
      avg_tokens_per_sec: null,
      total_token_usage: 0,
      total_cost_pkr: 0,
    });
    // Key B's only row was not streamed: it has a volume but no first-token time, so no ttft row.
    const volume = await org.client.get(`/analytics/timeseries?key_id=${org.keyB}&interval=1h`);
    expect(volume.body.data).toEqual([{ bucket: '2026-11-22T07:00:00', group: null, value: 1 }]);
    const ttft = await org.client.get(`/analytics/timeseries?key_id=${org.keyB}&interval=1h&metric=ttft`);
    expect(ttft.body.data).toEqual([]);
  });

  it('shows key.name null for a revoked key, null fields as null, and is_byok as an integer', async () => {
    const org = await freshOrg();
    await load([
      record(org, -SECOND, {
        req_id: `legacy-${org.orgId}`,
        key_id: org.revoked,
        model: 'svc/llama-3.1-70b',
        prompt_tokens: null,
        cache_creation_input_tokens: null,
        cache_read_input_tokens: null,
        upstream_model: null,
        served_by: null,
        attempts: null,
        api: null,
        is_byok: 1,
        cost_micro: 12,
        metadata: JSON.stringify({ customer: 'Acme' }),
      }),
    ]);
    const page = await org.client.get('/analytics/requests');
    expect(page.body.requests).toEqual([
      expect.objectContaining({
        req_id: `legacy-${org.orgId}`,
        key: { id: org.revoked, name: null },
        project: { id: org.p1, name: 'Default' },
        stream: false,
        api: null,
        upstream: null,
        financials: { cost_pkr: 0.000012, is_byok: 1 },
        metadata: { customer: 'Acme' },
        metrics: expect.objectContaining({
          ttft_ms: null,
          tpot_ms: null,
          prompt_tokens: null,
          cache_creation_input_tokens: null,
          cache_read_input_tokens: null,
        }),
      }),
    ]);
  });
});

describe('a search read from the rows', () => {
  // A day's window of a few rows in a log of a hundred more: reading the rows costs less than
  // the terms, so these searches take the rows (the property tests cover both ways).
  const history = (org: Org) =>
    Array.from({ length: 100 }, (_, i) =>
      record(org, -2 * DAY - i * MINUTE, { metadata: JSON.stringify({ trace_id: `older-${i}` }) }),
    );
  const searcher = (org: Org) => async (text: string) => {
    const page = await org.client.get(`/analytics/requests?search=${encodeURIComponent(text)}`);
    expect(page.status, text).toBe(200);
    return page.body.requests.map((row: { req_id: string }) => row.req_id);
  };

  it('finds capitals of any script by a lower-case text', async () => {
    const org = await freshOrg();
    const greek = record(org, -MINUTE, { req_id: `REQ-ΩMEGA-${org.orgId}` });
    const german = record(org, -2 * MINUTE, { metadata: JSON.stringify({ région: 'ÄRGER-STRASSE' }) });
    const plain = record(org, -3 * MINUTE, { metadata: JSON.stringify({ customer: 'ACME' }) });
    await load([greek, german, plain, ...history(org)]);
    const found = searcher(org);
    expect(await found('ω')).toEqual([greek.req_id]);
    expect(await found('ωmega')).toEqual([greek.req_id]);
    expect(await found('ä')).toEqual([german.req_id]);
    expect(await found('ärger')).toEqual([german.req_id]);
    expect(await found('é')).toEqual([german.req_id]);
    expect(await found('cm')).toEqual([plain.req_id]);
    expect(await found('acme')).toEqual([plain.req_id]);
  });

  // Another program writing the request log may escape what ours keeps as it is (Python every
  // non-ASCII character, Go < > and &, PHP /): a search still finds the strings, not their escapes.
  it('finds metadata keys and values whatever characters their JSON escaped', async () => {
    const org = await freshOrg();
    const unicode = record(org, -MINUTE, {
      metadata: String.raw`{"customer":"\u00c4rger \u003cb\u003e","unit":"\u212aelvin","caf\u00e9":"x"}`,
    });
    const slashed = record(org, -2 * MINUTE, { metadata: String.raw`{"route":"v1\/chat"}` });
    await load([unicode, slashed, record(org, -3 * MINUTE), ...history(org)]);
    const found = searcher(org);
    // The Kelvin sign folds to an ASCII k.
    for (const text of ['ärger', 'rger <b>', 'kelvin', 'café', 'caf']) {
      expect(await found(text), text).toEqual([unicode.req_id]);
    }
    for (const text of ['v1/chat', 'route']) expect(await found(text), text).toEqual([slashed.req_id]);
  });
});

describe('GET /keys and /admin/usage-throttling read the request log', () => {
  it('gives last_used_at as the newest row of each key', async () => {
    const org = await freshOrg();
    const records = [
      record(org, -10 * DAY),
      record(org, -500 * DAY), // older than any analytics window still counts
      record(org, -3 * HOUR, { key_id: org.keyB }),
      record(org, -HOUR - 1, { key_id: org.keyB }),
    ];
    await load(records);
    const keys = (await org.client.get('/keys')).body.keys;
    expect(Object.fromEntries(keys.map((k: any) => [k.id, k.last_used_at]))).toEqual({
      [org.keyA]: new Date(FIXED_NOW - 10 * DAY).toISOString(),
      [org.keyB]: new Date(FIXED_NOW - HOUR - 1).toISOString(),
    });
  });

  it('counts requests in the last minute and status-429 rows in time_range per active key', async () => {
    const org = await freshOrg();
    await load([
      record(org, 0),
      record(org, -59_999),
      record(org, -60_001), // more than a minute ago
      record(org, 1), // in the future of the server's clock
      record(org, -30 * SECOND, { key_id: org.keyB, status: 429 }),
      record(org, -HOUR, { status: 429 }),
      record(org, -DAY, { status: 429 }), // exactly at the edge of 24h
      record(org, -DAY - 1, { status: 429 }),
      record(org, -2 * DAY, { status: 429 }),
      record(org, -HOUR, { key_id: org.revoked, status: 429 }),
      record(org, -HOUR, { key_id: null, status: 429 }),
    ]);
    const byId = (body: any) => Object.fromEntries(body.keys.map((k: any) => [k.id, k]));
    const answer = await org.client.get('/admin/usage-throttling');
    expect(answer.status).toBe(200);
    expect(answer.body.time_range).toBe('24h');
    const keys = byId(answer.body);
    expect(Object.keys(keys).sort()).toEqual([org.keyA, org.keyB].sort());
    expect(keys[org.keyA]).toMatchObject({
      name: 'alpha key',
      rate_limit_rpm: 60,
      requests_last_minute: 2,
      throttled_requests: 2,
      credit_limit_cents: null,
      spent_cents: 8 * 250_000,
    });
    expect(keys[org.keyA].key_prefix).toMatch(/^sk_svc_[A-Za-z0-9]{8}$/);
    expect(keys[org.keyB]).toMatchObject({ requests_last_minute: 1, throttled_requests: 1, spent_cents: 250_000 });
    const wider = byId((await org.client.get('/admin/usage-throttling?time_range=2d')).body);
    expect(wider[org.keyA].throttled_requests).toBe(4);
    const narrow = byId((await org.client.get('/admin/usage-throttling?time_range=1s')).body);
    expect(narrow[org.keyA]).toMatchObject({ throttled_requests: 0, requests_last_minute: 2 });
  });
});
