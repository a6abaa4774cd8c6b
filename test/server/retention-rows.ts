import { createHash } from 'node:crypto';
import type { Database } from 'better-sqlite3';
import { expect } from 'vitest';
import type {
  CacheSums,
  RequestFilter,
  DashboardPoint,
  DashboardResult,
  GroupBy,
  Metric,
  Scope,
  SeriesJson,
  SummaryResult,
  TopRow,
} from '../../server/analytics/query-types.js';
import { grainsFor, keptSegments } from '../../server/analytics/windows.js';
import { retentionHorizon } from '../../server/domain/retention.js';
import type { RequestApi } from '../../server/schemas/request-log.js';
import { addBin, binOf, encode, SketchAccumulator, type Bins } from '../../server/stores/telemetry/latency-sketch.js';
import type { RequestRecord } from '../../server/stores/telemetry/request-record.js';
import {
  BOARD_GRAINS,
  CACHE_GRAINS,
  GRAINS,
  OUTCOME_GRAINS,
  type Grain,
} from '../../server/stores/telemetry/rollup-grains.js';
import * as ref from './analytics-reference.js';
import { seededRandom } from './request-rows.js';

/**
 * Rows and reference answers for the retention suites: a request log over four days before a
 * fixed `NOW`, whose rows before `HORIZON` (two days' retention) are deleted. What a read with
 * the horizon should count is worked out here from `keptSegments` and the rows themselves: the
 * rows of the whole rollup cells before the horizon, and every row from it on.
 */

export const MINUTE = 60_000;
export const HOUR = 3_600_000;
export const DAY = 86_400_000;

/** Mid-hour and mid-minute, so that neither the horizon nor the windows fall on a day. */
export const NOW = Date.UTC(2026, 10, 6, 9, 41, 17, 250);
/** Two days' retention at NOW: 2026-11-04T09:00:00Z. */
export const HORIZON = retentionHorizon(2, NOW)!;
export const START = NOW - 4 * DAY;
export const MAIN = 'org-main';
export const OTHER = 'org-other';

const CUSTOMERS = ['Lahore-Health', 'KARACHI-logistics', 'Straße-Öl', 'ravi-foods', 'Quetta-Agri'];
const MODELS = ['openai/gpt-4o', 'svc/fast', 'anthropic/claude'];
const OWNERS: { project: string | null; key: string | null }[] = [
  { project: 'p0', key: 'k-a' },
  { project: 'p1', key: 'k-b' },
  { project: null, key: null },
  { project: 'p0', key: null },
];
const OUTCOMES: { status: number; upstream_error: string | null; termination_reason: string }[] = [
  { status: 200, upstream_error: null, termination_reason: 'completed' },
  { status: 200, upstream_error: null, termination_reason: 'completed' },
  { status: 200, upstream_error: null, termination_reason: 'completed' },
  { status: 400, upstream_error: '400 invalid_request_error', termination_reason: 'upstream_error' },
  { status: 401, upstream_error: null, termination_reason: 'refused' },
  { status: 429, upstream_error: '429 slow down', termination_reason: 'rate_limited' },
  { status: 429, upstream_error: null, termination_reason: 'rate_limited' },
  { status: 503, upstream_error: '503 unavailable', termination_reason: 'upstream_error' },
];
const APIS: (RequestApi | null)[] = ['chat', 'chat', 'messages', 'responses', null];

export interface RowOptions {
  seed: number;
  /** Request ids are `<prefix><number>`, the number from `first` on, six digits. */
  prefix: string;
  first?: number;
  /** Times in [from, to). */
  from: number;
  to: number;
  /** The share of MAIN's rows (the rest are OTHER's); 1 by default. */
  mainShare?: number;
}

/**
 * `count` rows, the same on every run for the same options: most times at any millisecond, a
 * tenth on a minute, a few on an hour; every outcome; unknown first tokens, prompts and cache
 * fields; a customer shared by many rows and a trace id of the row's own in most metadata.
 * Durations are halves, so their sums are exact in any order.
 */
export function retentionRows(count: number, options: RowOptions): RequestRecord[] {
  const random = seededRandom(options.seed);
  const pick = <T>(list: readonly T[]) => list[Math.floor(random() * list.length)]!;
  const rows: RequestRecord[] = [];
  for (let n = 0; n < count; n++) {
    const number = (options.first ?? 0) + n;
    let ts = options.from + Math.floor(random() * (options.to - options.from));
    const align = random();
    if (align < 0.1) ts -= ts % MINUTE;
    else if (align < 0.12) ts -= ts % HOUR;
    const owner = pick(OWNERS);
    const outcome = pick(OUTCOMES);
    const ttft = random() < 0.2 ? null : Math.floor(random() * 1_600) / 2;
    const prompt = random() < 0.1 ? null : Math.floor(random() * 3_000);
    const generated = outcome.status === 200 ? Math.floor(random() * 900) : 0;
    const cacheKnown = random() < 0.7;
    const shape = random();
    const metadata =
      shape < 0.15
        ? {}
        : {
            customer: pick(CUSTOMERS),
            trace_id: `tr-${Math.floor(random() * 2 ** 48).toString(16)}-${number}`,
            ...(shape > 0.95 ? { parent_req: `${options.prefix}${String(number >> 1).padStart(6, '0')}` } : {}),
          };
    rows.push({
      req_id: `${options.prefix}${String(number).padStart(6, '0')}`,
      ts,
      org_id: random() < (options.mainShare ?? 1) ? MAIN : OTHER,
      project_id: owner.project,
      key_id: owner.key,
      model: pick(MODELS),
      status: outcome.status,
      stream: random() < 0.5 ? 1 : 0,
      // A long tail, after the first token when there is one.
      total_ms: (ttft ?? 12.5) + Math.round(Math.exp(random() * 9) * 2) / 2,
      ttft_ms: ttft,
      tpot_ms: random() < 0.3 ? null : 2.5,
      pre_dispatch_ms: 12.5,
      prompt_tokens: prompt,
      tokens_generated: generated,
      cache_creation_input_tokens: cacheKnown ? Math.floor(random() * 40) : null,
      cache_read_input_tokens: cacheKnown ? Math.floor(random() * 500) : null,
      total_tokens: (prompt ?? 0) + generated,
      tokens_estimated: random() < 0.1 ? 1 : 0,
      cost_micro: outcome.status === 200 ? 500 + Math.floor(random() * 5_000) : 0,
      is_byok: random() < 0.1 ? 1 : 0,
      termination_reason: outcome.termination_reason,
      upstream_error: outcome.upstream_error,
      upstream_model: random() < 0.1 ? null : 'model-2026',
      served_by: null,
      attempts: null,
      api: pick(APIS),
      user_agent: 'agent/1.0',
      metadata: JSON.stringify(metadata),
    });
  }
  return rows;
}

/** A row's trace id, or null when its metadata has none. */
export const traceOf = (row: RequestRecord): string | null =>
  (JSON.parse(row.metadata) as { trace_id?: string }).trace_id ?? null;

/** A scope's dimension filters, as `Scope` names them. */
export type Filters = Pick<Scope, 'orgId' | 'projectId' | 'keyId' | 'model'>;

export function inFilters(row: RequestRecord, f: Filters): boolean {
  return (
    row.org_id === f.orgId &&
    (f.projectId === undefined || row.project_id === f.projectId) &&
    (f.keyId === undefined || row.key_id === f.keyId) &&
    (f.model === undefined || row.model === f.model)
  );
}

/**
 * The rows a read of [from, to) counts when it reads `grains` with the horizon: those in the
 * segments `keptSegments` keeps (whole cells before the horizon, everything from it on).
 */
export function keptRows(
  rows: readonly RequestRecord[],
  filters: Filters,
  from: number,
  to: number,
  grains: readonly Grain[],
  horizon: number | undefined,
): RequestRecord[] {
  const parts = keptSegments(from, to, grains, horizon);
  return rows.filter((row) => inFilters(row, filters) && parts.some((part) => part.from <= row.ts && row.ts < part.to));
}

/** How many of the rollups' dimensions (project, key, model) a read names by its filters and grouping. */
function dimensionsNamed(scope: Filters, groupBy?: GroupBy | null): number {
  const named = new Set<string>();
  if (scope.projectId !== undefined) named.add('project');
  if (scope.keyId !== undefined) named.add('key');
  if (scope.model !== undefined) named.add('model');
  if (groupBy) named.add(groupBy);
  return named.size;
}

/**
 * The grains whose cells a usage read (summary, timeseries, top) is counted from: the cells by one
 * dimension go down to a minute, the full cells (two dimensions named) to five minutes.
 */
export function usageGrains(scope: Filters, select: { intervalMs?: number; groupBy?: GroupBy | null } = {}): Grain[] {
  const grains = select.intervalMs === undefined ? [...GRAINS] : grainsFor(select.intervalMs);
  return dimensionsNamed(scope, select.groupBy) <= 1 ? grains : grains.filter((grain) => grain.usage !== null);
}

/** The dashboard's cells are by one dimension at a time: a scope naming two is read from its rows. */
export const boardGrains = (scope: Filters): readonly Grain[] => (dimensionsNamed(scope) <= 1 ? BOARD_GRAINS : []);

const mean = (values: number[]) => (values.length === 0 ? null : values.reduce((a, b) => a + b, 0) / values.length);
const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);

/** A summary as `AnalyticsQueries` answers it, against the reference over `rows`. */
export function expectSummary(actual: SummaryResult, rows: readonly RequestRecord[], label: string): void {
  expect(actual.requests, label).toBe(rows.length);
  expect(actual.totalTokens, label).toBe(sum(rows.map((row) => row.total_tokens)));
  expect(actual.costMicro, label).toBe(sum(rows.map((row) => row.cost_micro)));
  const expected = {
    avgTotalMs: mean(rows.map((row) => row.total_ms)),
    avgTtftMs: mean(rows.flatMap((row) => (row.ttft_ms === null ? [] : [row.ttft_ms]))),
    tokensPerSecond: ref.tokensPerSecond([...rows]),
  };
  for (const [name, value] of Object.entries(expected)) {
    const got = actual[name as keyof typeof expected];
    expect(ref.closeTo(got, value), `${label} ${name}: ${got} against ${value}`).toBe(true);
  }
}

/** A page of the request log against the reference over `rows`, from the filter's horizon on. */
export function expectPage(
  answer: { total: number; rows: RequestRecord[] },
  rows: readonly RequestRecord[],
  filter: RequestFilter,
  offset: number,
): void {
  const from = Math.max(filter.from, filter.horizon ?? -Infinity);
  const expected = ref.requestLog([...rows], {
    orgId: filter.orgId,
    now: filter.to,
    rangeMs: filter.to - from,
    ...(filter.model === undefined ? {} : { model: filter.model }),
    ...(filter.statusClass === undefined ? {} : { statusCategory: `${filter.statusClass}xx` as ref.StatusCategory }),
    ...(filter.search === undefined ? {} : { search: filter.search }),
  });
  const label = JSON.stringify(filter);
  expect(answer.total, label).toBe(expected.length);
  expect(
    answer.rows.map((row) => row.req_id),
    label,
  ).toEqual(expected.slice(offset, offset + 50).map((row) => row.req_id));
  for (const row of answer.rows) expect(row.ts).toBeGreaterThanOrEqual(from);
}

/** A timeseries' JSON as text: SQLite's comes as its UTF-8 bytes (SeriesJson). */
export const seriesText = (json: string | Uint8Array): string =>
  typeof json === 'string' ? json : Buffer.from(json.buffer, json.byteOffset, json.byteLength).toString('utf8');

/** An answer with a timeseries' bytes as text: compared as bytes, element by element, they took minutes. */
export const answerText = <T>(answer: T): T =>
  answer && typeof answer === 'object' && 'json' in answer && answer.json instanceof Uint8Array
    ? { ...answer, json: seriesText(answer.json) }
    : answer;

/** A timeseries' points against the reference's over `rows` (already those of the window and scope). */
export function expectSeries(
  actual: SeriesJson,
  rows: readonly RequestRecord[],
  metric: Metric,
  intervalMs: number,
  groupBy: GroupBy | null,
  label: string,
): void {
  const points = JSON.parse(seriesText(actual.json)) as ref.SeriesRow[];
  const window = { orgId: rows[0]?.org_id ?? '', now: Number.MAX_SAFE_INTEGER, rangeMs: Number.MAX_SAFE_INTEGER };
  const expected = ref.timeseries([...rows], window, metric, intervalMs, groupBy);
  expect(actual.points, label).toBe(expected.length);
  expect(
    points.map((p) => [p.bucket, p.group]),
    label,
  ).toEqual(expected.map((p) => [p.bucket, p.group]));
  points.forEach((point, i) => {
    expect(ref.closeTo(point.value, expected[i]!.value), `${label} ${point.bucket}: ${point.value}`).toBe(true);
  });
}

const PERCENTILES = [0.5, 0.95, 0.99];

/** The percentiles of `values` as a sketch of them reads them back (latency-sketch.ts). */
function percentiles(values: number[]): number[] | null {
  if (values.length === 0) return null;
  const bins: Bins = new Map();
  for (const value of values) addBin(bins, binOf(value));
  const sketch = new SketchAccumulator();
  sketch.addEncoded(encode(bins));
  return sketch.quantiles(PERCENTILES);
}

/** Generation time, and whether the row counts in the speed: tokens after the first one (or dispatch). */
function speed(row: RequestRecord): [number, number] {
  const ms = row.total_ms - (row.ttft_ms ?? row.pre_dispatch_ms);
  return row.tokens_generated > 0 && ms > 0 ? [row.tokens_generated, ms] : [0, 0];
}

/** One dashboard bucket over `rows`: measures in board-cells.ts's BOARD_MEASURES order. */
export function boardPoint(rows: readonly RequestRecord[]): DashboardPoint {
  const count = (test: (row: RequestRecord) => boolean) => rows.filter(test).length;
  const total = (value: (row: RequestRecord) => number) => sum(rows.map(value));
  const fourxx = (row: RequestRecord) => row.status >= 400 && row.status < 500;
  return {
    measures: [
      rows.length,
      count((row) => row.status < 400),
      count((row) => fourxx(row) && row.upstream_error !== null),
      count((row) => row.status >= 500),
      count((row) => fourxx(row) && row.upstream_error === null),
      total((row) => row.cost_micro),
      total((row) => row.prompt_tokens ?? 0),
      count((row) => row.prompt_tokens !== null),
      total((row) => row.tokens_generated),
      total((row) => row.cache_read_input_tokens ?? 0),
      total((row) => row.cache_creation_input_tokens ?? 0),
      count((row) => row.cache_read_input_tokens !== null || row.cache_creation_input_tokens !== null),
      total((row) => speed(row)[0]),
      total((row) => speed(row)[1]),
      count((row) => row.status === 429 && row.upstream_error !== null),
    ],
    latency: percentiles(rows.map((row) => row.total_ms)),
    ttft: percentiles(rows.flatMap((row) => (row.ttft_ms === null ? [] : [row.ttft_ms]))),
  };
}

/** Prompt and cache tokens by model, ordered by model. */
function cacheOf(rows: readonly RequestRecord[]): CacheSums[] {
  const models = [...new Set(rows.map((row) => row.model))].sort(ref.compareText);
  return models.map((model) => {
    const of = rows.filter((row) => row.model === model);
    const known = of.filter((row) => row.prompt_tokens !== null);
    return {
      model,
      prompt_tokens: sum(of.map((row) => row.prompt_tokens ?? 0)),
      prompt_rows: known.length,
      cache_read: sum(of.map((row) => row.cache_read_input_tokens ?? 0)),
      cache_write: sum(of.map((row) => row.cache_creation_input_tokens ?? 0)),
      cache_rows: of.filter((row) => row.cache_read_input_tokens !== null || row.cache_creation_input_tokens !== null)
        .length,
      known_read: sum(known.map((row) => row.cache_read_input_tokens ?? 0)),
      known_write: sum(known.map((row) => row.cache_creation_input_tokens ?? 0)),
    };
  });
}

/** The dashboard's answer over `rows`, each part over the rows its own segments keep. */
export function expectedDashboard(
  rows: readonly RequestRecord[],
  scope: Scope,
  edges: readonly number[],
  previous: { from: number; to: number },
): DashboardResult {
  const grains = boardGrains(scope);
  const points: DashboardPoint[] = [];
  for (let bucket = 0; bucket + 1 < edges.length; bucket++) {
    const from = Math.max(edges[bucket]!, scope.from);
    const to = Math.min(edges[bucket + 1]!, scope.to + 1);
    points.push(boardPoint(keptRows(rows, scope, from, to, grains, scope.horizon)));
  }
  return {
    points,
    current: boardPoint(keptRows(rows, scope, scope.from, scope.to + 1, grains, scope.horizon)),
    previous: boardPoint(keptRows(rows, scope, previous.from, previous.to + 1, grains, scope.horizon)),
    cache: cacheOf(keptRows(rows, scope, scope.from, scope.to + 1, CACHE_GRAINS, scope.horizon)),
  };
}

/** The top table's rows over `rows`, ordered by group (null first), each figure over its own segments' rows. */
export function expectedTop(
  rows: readonly RequestRecord[],
  scope: Scope,
  groupBy: GroupBy,
  previous: { from: number; to: number },
  trendEdges: readonly number[],
): TopRow[] {
  const groupOf = (row: RequestRecord): string | null =>
    groupBy === 'project' ? row.project_id : groupBy === 'key' ? row.key_id : groupBy === 'model' ? row.model : row.api;
  const top = new Map<string | null, TopRow>();
  const of = (group: string | null) => {
    let found = top.get(group);
    if (!found) {
      found = {
        group,
        requests: 0,
        totalMs: 0,
        costMicro: 0,
        errors: 0,
        previousRequests: 0,
        previousCostMicro: 0,
        trend: trendEdges.slice(1).map(() => 0),
        latency: null,
      };
      top.set(group, found);
    }
    return found;
  };
  const usage = usageGrains(scope, { groupBy });
  for (const row of keptRows(rows, scope, scope.from, scope.to + 1, usage, scope.horizon)) {
    const line = of(groupOf(row));
    line.requests++;
    line.totalMs += row.total_ms;
    line.costMicro += row.cost_micro;
  }
  for (const row of keptRows(rows, scope, previous.from, previous.to + 1, usage, scope.horizon)) {
    const line = of(groupOf(row));
    line.previousRequests++;
    line.previousCostMicro += row.cost_micro;
  }
  // Failures are counted as the request log's totals are: by day and hour.
  for (const row of keptRows(rows, scope, scope.from, scope.to + 1, OUTCOME_GRAINS, scope.horizon)) {
    if (row.status >= 500 && row.status < 600) of(groupOf(row)).errors++;
  }
  // Trends from the dashboard's cells by the group's dimension, unless the scope names another.
  const own = dimensionsNamed(scope);
  const sameDimension =
    own === 0 ||
    (own === 1 &&
      ((groupBy === 'project' && scope.projectId !== undefined) ||
        (groupBy === 'key' && scope.keyId !== undefined) ||
        (groupBy === 'model' && scope.model !== undefined)));
  const trendGrains = groupBy !== 'api' && sameDimension ? BOARD_GRAINS : [];
  const latencies = new Map<string | null, number[]>();
  for (let bucket = 0; bucket + 1 < trendEdges.length; bucket++) {
    const from = Math.max(trendEdges[bucket]!, scope.from);
    const to = Math.min(trendEdges[bucket + 1]!, scope.to + 1);
    for (const row of keptRows(rows, scope, from, to, trendGrains, scope.horizon)) {
      const group = groupOf(row);
      of(group).trend[bucket]!++;
      latencies.set(group, [...(latencies.get(group) ?? []), row.total_ms]);
    }
  }
  for (const [group, values] of latencies) of(group).latency = percentiles(values);
  return sortTop([...top.values()]);
}

export const sortTop = (rows: TopRow[]) =>
  [...rows].sort((a, b) =>
    a.group === b.group ? 0 : a.group === null ? -1 : b.group === null ? 1 : ref.compareText(a.group, b.group),
  );

/** Bucket edges from `first` every `step` to past `scope.to`, as the dashboard's reporting zone cuts them. */
export function edgesFrom(first: number, step: number, scope: { to: number }): number[] {
  const edges: number[] = [];
  for (let at = first; at <= scope.to; at += step) edges.push(at);
  return [...edges, scope.to + 1];
}

/**
 * Each rollup table (`rollup_*`) of a SQLite store: its row count and a digest of its rows in key
 * order; only the cells of buckets before `before` when given.
 */
export function rollupDigests(db: Database, before?: number): Record<string, string> {
  const tables = db
    .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'rollup\\_%' ESCAPE '\\' ORDER BY name")
    .pluck()
    .all() as string[];
  const digests: Record<string, string> = {};
  for (const table of tables) {
    const columns = (db.prepare(`PRAGMA table_info(${table})`).all() as { name: string }[]).map((c) => c.name);
    const rows = db
      .prepare(
        `SELECT * FROM ${table} ${before === undefined ? '' : `WHERE bucket < ${before}`}
        ORDER BY ${columns.map((_, i) => i + 1).join(', ')}`,
      )
      .raw()
      .all() as unknown[][];
    const hash = createHash('sha256');
    for (const row of rows) {
      hash.update(
        JSON.stringify(
          row.map((value) => (value instanceof Uint8Array ? Buffer.from(value).toString('base64') : value)),
        ),
      );
      hash.update('\n');
    }
    digests[table] = `${rows.length}:${hash.digest('hex')}`;
  }
  return digests;
}
