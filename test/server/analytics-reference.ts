/**
 * A reference model of the analytics endpoints: plain TypeScript over in-memory request
 * records, written from the contract (control-plane-api.md 4.5 and the decisions page)
 * and independent of the server's SQL. The property tests hold every endpoint against it.
 */
import type { RequestRecord } from '../../server/stores/telemetry/request-record.js';

export type Metric = 'volume' | 'latency' | 'ttft' | 'tok_s' | 'token_usage';
/** `api` is beyond the contract: the gateway's API each row came in on (null: unknown). */
export type GroupBy = 'project' | 'key' | 'model' | 'api';
export const METRICS: Metric[] = ['volume', 'latency', 'ttft', 'tok_s', 'token_usage'];
export const GROUP_BYS: GroupBy[] = ['project', 'key', 'model', 'api'];

const UNIT_MS = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/** Milliseconds of a `<int><unit>` duration such as `90s` or `400d`. */
export function durationMs(text: string): number {
  const match = /^([1-9][0-9]*)([smhd])$/.exec(text);
  if (!match) throw new Error(`not a duration: ${text}`);
  return Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS];
}

/** The common filters: one organisation, the window `[now - range, now]` with both edges, and narrowing ids. */
export interface Window {
  orgId: string;
  now: number;
  rangeMs: number;
  projectId?: string;
  keyId?: string;
  model?: string;
  /** Beyond the contract: only rows that came in on this API (a row whose API is unknown never matches). */
  api?: string;
}

export function inWindow(row: RequestRecord, w: Window): boolean {
  return (
    row.org_id === w.orgId &&
    row.ts >= w.now - w.rangeMs &&
    row.ts <= w.now &&
    (w.projectId === undefined || row.project_id === w.projectId) &&
    (w.keyId === undefined || row.key_id === w.keyId) &&
    (w.model === undefined || row.model === w.model) &&
    (w.api === undefined || row.api === w.api)
  );
}

const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);
const mean = (values: number[]) => (values.length === 0 ? null : sum(values) / values.length);

/** Generation time of a row: after the first token when known, else after dispatch. */
const generationMs = (row: RequestRecord) => row.total_ms - (row.ttft_ms ?? row.pre_dispatch_ms);

/** Tokens generated per second of generation, over the rows that have both; null when none has. */
export function tokensPerSecond(rows: RequestRecord[]): number | null {
  const counted = rows.filter((row) => row.tokens_generated > 0 && generationMs(row) > 0);
  if (counted.length === 0) return null;
  return (sum(counted.map((row) => row.tokens_generated)) * 1000) / sum(counted.map(generationMs));
}

export interface ExpectedSummary {
  total_requests: number;
  avg_e2e_latency_ms: number | null;
  avg_ttft_ms: number | null;
  avg_tokens_per_sec: number | null;
  total_token_usage: number;
  total_cost_pkr?: number;
}

export function summary(all: RequestRecord[], w: Window): ExpectedSummary {
  const rows = all.filter((row) => inWindow(row, w));
  const result: ExpectedSummary = {
    total_requests: rows.length,
    avg_e2e_latency_ms: mean(rows.map((row) => row.total_ms)),
    avg_ttft_ms: mean(rows.flatMap((row) => (row.ttft_ms === null ? [] : [row.ttft_ms]))),
    avg_tokens_per_sec: tokensPerSecond(rows),
    total_token_usage: sum(rows.map((row) => row.total_tokens)),
  };
  if (w.keyId !== undefined) result.total_cost_pkr = sum(rows.map((row) => row.cost_micro)) / 1_000_000;
  return result;
}

function metricValue(metric: Metric, rows: RequestRecord[]): number | null {
  switch (metric) {
    case 'volume':
      return rows.length;
    case 'latency':
      return mean(rows.map((row) => row.total_ms));
    case 'ttft':
      return mean(rows.flatMap((row) => (row.ttft_ms === null ? [] : [row.ttft_ms])));
    case 'tok_s':
      return tokensPerSecond(rows);
    case 'token_usage':
      return sum(rows.map((row) => row.total_tokens));
  }
}

/** Orders text the way SQLite's default (binary) collation does: by UTF-8 bytes. */
export function compareText(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

/** Null first, then text in binary order: how SQL orders a nullable group. */
function compareGroup(a: string | null, b: string | null): number {
  if (a === b) return 0;
  if (a === null) return -1;
  if (b === null) return 1;
  return compareText(a, b);
}

export interface SeriesRow {
  bucket: string;
  group: string | null;
  value: number;
}

/**
 * One row per (bucket, group) with data, buckets aligned to the epoch, ordered by bucket
 * then group; a row whose value is null is left out.
 */
export function timeseries(
  all: RequestRecord[],
  w: Window,
  metric: Metric,
  intervalMs: number,
  groupBy: GroupBy | null,
): SeriesRow[] {
  const cells = new Map<string, { bucket: number; group: string | null; rows: RequestRecord[] }>();
  for (const row of all) {
    if (!inWindow(row, w)) continue;
    const bucket = Math.floor(row.ts / intervalMs) * intervalMs;
    const group =
      groupBy === 'project'
        ? row.project_id
        : groupBy === 'key'
          ? row.key_id
          : groupBy === 'model'
            ? row.model
            : groupBy === 'api'
              ? row.api
              : null;
    const id = JSON.stringify([bucket, group]);
    const cell = cells.get(id) ?? { bucket, group, rows: [] };
    cell.rows.push(row);
    cells.set(id, cell);
  }
  return [...cells.values()]
    .sort((a, b) => a.bucket - b.bucket || compareGroup(a.group, b.group))
    .flatMap((cell) => {
      const value = metricValue(metric, cell.rows);
      if (value === null) return [];
      return [{ bucket: new Date(cell.bucket).toISOString().slice(0, 19), group: cell.group, value }];
    });
}

export type StatusCategory = '2xx' | '3xx' | '4xx' | '5xx';

export interface LogFilter extends Window {
  /** One provider's models (beyond the contract). */
  models?: string[];
  statusCategory?: StatusCategory;
  terminationReason?: string;
  minCostPkr?: number;
  search?: string;
}

/** Every row of the request log that the filter selects, newest first, ties by req_id (descending). */
export function requestLog(all: RequestRecord[], f: LogFilter): RequestRecord[] {
  const needle = f.search?.toLowerCase();
  return all
    .filter((row) => {
      if (!inWindow(row, f)) return false;
      if (f.models !== undefined && !f.models.includes(row.model)) return false;
      if (f.statusCategory !== undefined && Math.floor(row.status / 100) !== Number(f.statusCategory[0])) return false;
      if (f.terminationReason !== undefined && row.termination_reason !== f.terminationReason) return false;
      if (f.minCostPkr !== undefined && !(row.cost_micro / 1_000_000 >= f.minCostPkr)) return false;
      if (needle !== undefined) {
        const metadata = JSON.parse(row.metadata) as Record<string, string>;
        const texts = [row.req_id, ...Object.keys(metadata), ...Object.values(metadata)];
        if (!texts.some((text) => text.toLowerCase().includes(needle))) return false;
      }
      return true;
    })
    .sort((a, b) => b.ts - a.ts || compareText(b.req_id, a.req_id));
}

/** The names the organisation can see: its active keys and its projects. */
export interface Names {
  keys: Map<string, string>;
  projects: Map<string, string>;
}

/** A stored record in the request-log row shape of the specification. */
export function logRow(row: RequestRecord, names: Names) {
  const ref = (id: string | null, known: Map<string, string>) =>
    id === null ? null : { id, name: known.get(id) ?? null };
  return {
    req_id: row.req_id,
    timestamp: new Date(row.ts).toISOString(),
    model: row.model,
    status: row.status,
    stream: row.stream === 1,
    api: row.api,
    key: ref(row.key_id, names.keys),
    project: ref(row.project_id, names.projects),
    metrics: {
      total_ms: row.total_ms,
      ttft_ms: row.ttft_ms,
      tpot_ms: row.tpot_ms,
      pre_dispatch_ms: row.pre_dispatch_ms,
      prompt_tokens: row.prompt_tokens,
      tokens_generated: row.tokens_generated,
      cache_creation_input_tokens: row.cache_creation_input_tokens,
      cache_read_input_tokens: row.cache_read_input_tokens,
      total_tokens: row.total_tokens,
      tokens_estimated: row.tokens_estimated === 1,
    },
    financials: { cost_pkr: row.cost_micro / 1_000_000, is_byok: row.is_byok },
    status_detail: { termination_reason: row.termination_reason, upstream_error: row.upstream_error },
    upstream:
      row.upstream_model === null
        ? null
        : {
            model: row.upstream_model,
            // `provider/model`: the provider ends at the first slash (a model may hold more).
            provider: row.served_by === null ? null : row.served_by.split('/')[0]!,
            attempts: row.attempts === null ? null : (JSON.parse(row.attempts) as unknown[]),
          },
    user_agent: row.user_agent,
    metadata: JSON.parse(row.metadata) as Record<string, string>,
  };
}

/** One page of the request log: `total` counts every match, `requests` the rows from `offset`. */
export function requestPage(all: RequestRecord[], f: LogFilter, limit: number, offset: number, names: Names) {
  const matching = requestLog(all, f);
  return { total: matching.length, requests: matching.slice(offset, offset + limit).map((row) => logRow(row, names)) };
}

/** Newest request time of a key over the whole log, or null when it has none. */
export function lastUsed(all: RequestRecord[], keyId: string): string | null {
  const times = all.filter((row) => row.key_id === keyId).map((row) => row.ts);
  return times.length === 0 ? null : new Date(Math.max(...times)).toISOString();
}

/** Relative tolerance for floating-point figures (averages and rates). */
export const RELATIVE_TOLERANCE = 1e-9;

export function closeTo(actual: number | null | undefined, expected: number | null | undefined): boolean {
  if (actual === null || expected === null || actual === undefined || expected === undefined) {
    return actual === expected;
  }
  return Math.abs(actual - expected) <= RELATIVE_TOLERANCE * Math.max(Math.abs(actual), Math.abs(expected), 1e-12);
}
