import { BIGINT, DOUBLE, VARCHAR, type DuckDBConnection, type DuckDBType, type DuckDBValue } from '@duckdb/node-api';
import { microAtLeast } from '../server/domain/money.js';

/**
 * How a case is judged: against the targets of issue 6 section 2, and `log-duckdb` against
 * issue 31's (a request-log filter no slower than DuckDB at p95).
 */
export type CaseKind = 'analytics' | 'dashboard' | 'log' | 'log-duckdb' | 'log-offset' | 'search';

export interface DuckStatement {
  sql: string;
  params: Record<string, DuckDBValue>;
}

/**
 * Explicit parameter types. Left to infer, DuckDB binds a JS bigint as HUGEINT, and
 * `ts - ts % $intervalMs` in 128-bit arithmetic runs ten times slower than in BIGINT.
 */
export function paramTypes(params: Record<string, DuckDBValue>): Record<string, DuckDBType> {
  const types: Record<string, DuckDBType> = {};
  for (const [name, value] of Object.entries(params)) {
    if (typeof value === 'bigint') types[name] = BIGINT;
    else if (typeof value === 'number') types[name] = Number.isInteger(value) ? BIGINT : DOUBLE;
    else if (typeof value === 'string') types[name] = VARCHAR;
  }
  return types;
}

export interface BenchCase {
  id: string;
  kind: CaseKind;
  /** Path and query under the server's /api. */
  path: string;
  /** The server's SQL with the same meaning, in DuckDB, for a window ending at `now`. */
  duck: (now: number) => DuckStatement[];
  /** Which figure of the answer to check against DuckDB: the row count in the window. */
  count?: { field: 'total_requests' | 'total'; statement: (now: number) => DuckStatement };
}

/** The values the filtered cases use, taken from the data: the busiest key, project and model. */
export interface Picks {
  orgId: string;
  keyId: string;
  projectId: string;
  model: string;
  statusCategory: string;
  terminationReason: string;
  minCostPkr: number;
  /** A customer name fragment, found in metadata values. */
  searchMetadata: string;
  /** A fragment of one request id. */
  searchReqId: string;
}

export async function pickValues(db: DuckDBConnection): Promise<Picks> {
  const one = async (sql: string): Promise<DuckDBValue> => {
    const rows = (await db.runAndReadAll(sql)).getRows();
    const value = rows[0]?.[0];
    if (value === undefined || value === null) throw new Error(`no value for: ${sql}`);
    return value;
  };
  const busiest = (column: string) =>
    one(`SELECT ${column} FROM requests WHERE ${column} IS NOT NULL GROUP BY ALL ORDER BY COUNT(*) DESC, 1 LIMIT 1`);
  const customer = String(
    await one(`SELECT json_extract_string(metadata, '$.customer') AS c FROM requests
      WHERE c IS NOT NULL GROUP BY c ORDER BY COUNT(*) DESC, c LIMIT 1`),
  ).toLowerCase();
  const reqId = String(
    await one(`SELECT req_id FROM requests ORDER BY ts, req_id
      LIMIT 1 OFFSET (SELECT COUNT(*) // 3 FROM requests)`),
  );
  // The 99th percentile of settled cost, rounded down to whole paisa.
  const p99Micro = Number(await one('SELECT quantile_disc(cost_micro, 0.99) FROM requests'));
  return {
    orgId: String(await one('SELECT org_id FROM requests LIMIT 1')),
    keyId: String(await busiest('key_id')),
    projectId: String(await busiest('project_id')),
    model: String(await busiest('model')),
    statusCategory: '5xx',
    terminationReason: 'client_disconnect',
    minCostPkr: Math.floor(p99Micro / 10_000) / 100,
    // A fragment, so that it is a substring match and not the whole value.
    searchMetadata: customer.slice(1, Math.max(4, customer.length - 1)),
    searchReqId: reqId.slice(-14, -2).toLowerCase(),
  };
}

interface Filter {
  range: string;
  rangeMs: number;
  keyId?: string;
  projectId?: string;
  model?: string;
  statusClass?: number;
  terminationReason?: string;
  minCostMicro?: number;
  search?: string;
}

const GENERATION_MS = 'total_ms - COALESCE(ttft_ms, pre_dispatch_ms)';
const COUNTS_FOR_SPEED = `tokens_generated > 0 AND ${GENERATION_MS} > 0`;
const SPEED_TOKENS = `SUM(CASE WHEN ${COUNTS_FOR_SPEED} THEN tokens_generated END)`;
const SPEED_MS = `SUM(CASE WHEN ${COUNTS_FOR_SPEED} THEN ${GENERATION_MS} END)`;

export const METRICS = ['volume', 'latency', 'ttft', 'tok_s', 'token_usage'] as const;
const METRIC_SQL: Record<(typeof METRICS)[number], string> = {
  volume: 'COUNT(*)',
  latency: 'AVG(total_ms)',
  ttft: 'AVG(ttft_ms)',
  tok_s: `${SPEED_TOKENS} * 1000.0 / ${SPEED_MS}`,
  token_usage: 'SUM(total_tokens)',
};
export const GROUPS = ['project', 'key', 'model'] as const;
const GROUP_SQL: Record<(typeof GROUPS)[number], string> = { project: 'project_id', key: 'key_id', model: 'model' };

/** `%`, `_` and the escape itself taken literally: ILIKE as a case-insensitive substring test. */
function likePattern(text: string): string {
  return '%' + text.replace(/[\\%_]/g, (c) => '\\' + c) + '%';
}

const SEARCH_SQL = `(req_id ILIKE $pattern ESCAPE '\\'
  OR list_bool_or(list_transform(meta_terms, term -> term ILIKE $pattern ESCAPE '\\')))`;

/** The WHERE clause of server/analytics/queries.ts: window [now - range, now], both edges included. */
function where(orgId: string, filter: Filter, now: number): DuckStatement {
  const clauses = ['org_id = $orgId', 'ts >= $from', 'ts <= $to'];
  const params: Record<string, DuckDBValue> = {
    orgId,
    from: BigInt(now - filter.rangeMs),
    to: BigInt(now),
  };
  if (filter.projectId !== undefined) {
    clauses.push('project_id = $projectId');
    params.projectId = filter.projectId;
  }
  if (filter.keyId !== undefined) {
    clauses.push('key_id = $keyId');
    params.keyId = filter.keyId;
  }
  if (filter.model !== undefined) {
    clauses.push('model = $model');
    params.model = filter.model;
  }
  if (filter.statusClass !== undefined) {
    clauses.push('status >= $statusFrom AND status < $statusTo');
    params.statusFrom = filter.statusClass * 100;
    params.statusTo = filter.statusClass * 100 + 100;
  }
  if (filter.terminationReason !== undefined) {
    clauses.push('termination_reason = $terminationReason');
    params.terminationReason = filter.terminationReason;
  }
  if (filter.minCostMicro !== undefined) {
    clauses.push('cost_micro >= $minCostMicro');
    params.minCostMicro = BigInt(filter.minCostMicro);
  }
  if (filter.search !== undefined) {
    clauses.push(SEARCH_SQL);
    params.pattern = likePattern(filter.search);
  }
  return { sql: clauses.join(' AND '), params };
}

const RANGES = { '1h': 3_600_000, '24h': 86_400_000, '30d': 30 * 86_400_000 } as const;
type Range = keyof typeof RANGES;

function summarySql(orgId: string, filter: Filter, now: number): DuckStatement {
  const w = where(orgId, filter, now);
  return {
    sql: `SELECT COUNT(*) AS requests, AVG(total_ms) AS avg_total_ms, AVG(ttft_ms) AS avg_ttft_ms,
        ${SPEED_TOKENS} AS speed_tokens, ${SPEED_MS} AS speed_ms,
        COALESCE(SUM(total_tokens), 0) AS total_tokens, COALESCE(SUM(cost_micro), 0) AS cost_micro
      FROM requests WHERE ${w.sql}`,
    params: w.params,
  };
}

function countSql(orgId: string, filter: Filter, now: number): DuckStatement {
  const w = where(orgId, filter, now);
  return { sql: `SELECT COUNT(*) AS total FROM requests WHERE ${w.sql}`, params: w.params };
}

function query(params: Record<string, string | number | undefined>): string {
  const parts = Object.entries(params)
    .filter(([, value]) => value !== undefined)
    .map(([name, value]) => `${name}=${encodeURIComponent(String(value))}`);
  return parts.join('&');
}

const LOG_RANGE: Range = '30d';
const PAGE = 50;
export const OFFSET = 10_000;

/** Every timed case: summaries, timeseries and request-log pages. */
export function benchCases(picks: Picks): BenchCase[] {
  const { orgId } = picks;
  const cases: BenchCase[] = [];

  for (const range of Object.keys(RANGES) as Range[]) {
    for (const byKey of [false, true]) {
      const filter: Filter = { range, rangeMs: RANGES[range], ...(byKey ? { keyId: picks.keyId } : {}) };
      cases.push({
        id: `summary ${range}${byKey ? ' key' : ''}`,
        kind: 'analytics',
        path: `/analytics/summary?${query({ time_range: range, key_id: byKey ? picks.keyId : undefined })}`,
        duck: (now) => [summarySql(orgId, filter, now)],
        count: { field: 'total_requests', statement: (now) => countSql(orgId, filter, now) },
      });
    }
  }

  // Issue 26's spend screen: each key's cost on each of the last seven days (24 hours each, ending now).
  cases.push({
    id: 'spend 7d by key and day',
    kind: 'analytics',
    path: '/analytics/spend',
    duck: (now) => [
      {
        sql: `SELECT key_id, ($now - ts) // 86400000 AS age, SUM(cost_micro) AS cost FROM requests
          WHERE org_id = $orgId AND ts > $now - 604800000 AND ts <= $now GROUP BY ALL`,
        params: { orgId, now: BigInt(now) },
      },
    ],
  });

  // Issue 26's top-N table: 30 days by key, with the 30 days before and the 5xx answers.
  cases.push({
    id: 'top keys 30d',
    kind: 'analytics',
    path: '/analytics/top?group_by=key&time_range=30d',
    duck: (now) => [
      {
        sql: `SELECT key_id, COUNT(*) FILTER (WHERE ts >= $from) AS requests,
            SUM(cost_micro) FILTER (WHERE ts >= $from) AS cost, AVG(total_ms) FILTER (WHERE ts >= $from) AS latency,
            COUNT(*) FILTER (WHERE ts >= $from AND status >= 500) AS errors,
            COUNT(*) FILTER (WHERE ts < $from) AS previous_requests, SUM(cost_micro) FILTER (WHERE ts < $from) AS previous_cost
          FROM requests WHERE org_id = $orgId AND ts >= $previous AND ts <= $now GROUP BY key_id`,
        params: {
          orgId,
          now: BigInt(now),
          from: BigInt(now - RANGES['30d']),
          previous: BigInt(now - 2 * RANGES['30d'] - 1),
        },
      },
    ],
  });

  // Issue 26's dashboard: every panel's series and the cache by model in one answer; DuckDB
  // computes the same figures exactly (its percentiles too) from the rows.
  const dashboards: {
    id: string;
    filter: Filter;
    interval: string;
    intervalMs: number;
    http: Record<string, string>;
  }[] = [
    {
      id: '30d/6h',
      filter: { range: '30d', rangeMs: RANGES['30d'] },
      interval: '6h',
      intervalMs: 6 * 3_600_000,
      http: {},
    },
    { id: '24h/15m', filter: { range: '24h', rangeMs: RANGES['24h'] }, interval: '15m', intervalMs: 900_000, http: {} },
    {
      id: '30d/6h one key',
      filter: { range: '30d', rangeMs: RANGES['30d'], keyId: picks.keyId },
      interval: '6h',
      intervalMs: 6 * 3_600_000,
      http: { key_id: picks.keyId },
    },
  ];
  for (const { id, filter, interval, intervalMs, http } of dashboards) {
    cases.push({
      id: `dashboard ${id}`,
      kind: 'dashboard',
      path: `/analytics/dashboard?${query({ time_range: filter.range, interval, ...http })}`,
      duck: (now) => {
        const w = where(orgId, filter, now);
        return [
          {
            sql: `SELECT ts - ts % $intervalMs AS bucket, COUNT(*) AS requests, COUNT(*) FILTER (WHERE status < 400) AS ok,
                COUNT(*) FILTER (WHERE status >= 400 AND status < 500 AND upstream_error IS NOT NULL) AS client_errors,
                COUNT(*) FILTER (WHERE status >= 500) AS server_errors,
                COUNT(*) FILTER (WHERE status >= 400 AND status < 500 AND upstream_error IS NULL) AS refused,
                SUM(cost_micro), SUM(prompt_tokens), SUM(tokens_generated), SUM(cache_read_input_tokens),
                SUM(cache_creation_input_tokens),
                SUM(tokens_generated) FILTER (WHERE tokens_generated > 0 AND total_ms - COALESCE(ttft_ms, pre_dispatch_ms) > 0)
                  * 1000.0 / SUM(total_ms - COALESCE(ttft_ms, pre_dispatch_ms)) FILTER (WHERE tokens_generated > 0 AND total_ms - COALESCE(ttft_ms, pre_dispatch_ms) > 0) AS speed,
                quantile_disc(total_ms, [0.5, 0.95, 0.99]) AS latency, quantile_disc(ttft_ms, [0.5, 0.95, 0.99]) AS ttft
              FROM requests WHERE ${w.sql} GROUP BY bucket ORDER BY bucket`,
            params: { ...w.params, intervalMs: BigInt(intervalMs) },
          },
          {
            sql: `SELECT model, SUM(prompt_tokens), SUM(cache_read_input_tokens), SUM(cache_creation_input_tokens)
              FROM requests WHERE ${w.sql} GROUP BY model`,
            params: w.params,
          },
        ];
      },
    });
  }

  const series: { range: Range; interval: string; intervalMs: number }[] = [
    { range: '24h', interval: '5m', intervalMs: 300_000 },
    { range: '30d', interval: '1h', intervalMs: 3_600_000 },
  ];
  for (const { range, interval, intervalMs } of series) {
    for (const metric of METRICS) {
      for (const group of GROUPS) {
        const filter: Filter = { range, rangeMs: RANGES[range] };
        cases.push({
          id: `timeseries ${metric} ${range}/${interval} by ${group}`,
          kind: 'analytics',
          path: `/analytics/timeseries?${query({ metric, interval, group_by: group, time_range: range })}`,
          duck: (now) => {
            const w = where(orgId, filter, now);
            const value = METRIC_SQL[metric];
            return [
              {
                sql: `SELECT ts - ts % $intervalMs AS bucket, ${GROUP_SQL[group]} AS "group", ${value} AS value
                  FROM requests WHERE ${w.sql}
                  GROUP BY bucket, "group" HAVING ${value} IS NOT NULL
                  ORDER BY bucket, "group"`,
                params: { ...w.params, intervalMs: BigInt(intervalMs) },
              },
            ];
          },
        });
      }
    }
  }

  const minCostMicro = microAtLeast(picks.minCostPkr);
  const pages: {
    id: string;
    kind: CaseKind;
    filter: Partial<Filter>;
    http: Record<string, string | number>;
    /** The window, when not the log's 30 days. */
    range?: Range;
  }[] = [
    { id: 'first page', kind: 'log', filter: {}, http: {} },
    { id: 'project', kind: 'log', filter: { projectId: picks.projectId }, http: { project_id: picks.projectId } },
    { id: 'key', kind: 'log', filter: { keyId: picks.keyId }, http: { key_id: picks.keyId } },
    { id: 'model', kind: 'log', filter: { model: picks.model }, http: { model: picks.model } },
    {
      id: 'status_category',
      kind: 'log',
      filter: { statusClass: Number(picks.statusCategory[0]) },
      http: { status_category: picks.statusCategory },
    },
    {
      id: 'termination_reason',
      kind: 'log',
      filter: { terminationReason: picks.terminationReason },
      http: { termination_reason: picks.terminationReason },
    },
    { id: 'min_cost_pkr', kind: 'log', filter: { minCostMicro }, http: { min_cost_pkr: picks.minCostPkr } },
    {
      id: 'min_cost_pkr 24h',
      kind: 'log-duckdb',
      filter: { minCostMicro },
      http: { min_cost_pkr: picks.minCostPkr },
      range: '24h',
    },
    {
      id: 'search metadata',
      kind: 'search',
      filter: { search: picks.searchMetadata },
      http: { search: picks.searchMetadata },
    },
    { id: 'search req_id', kind: 'search', filter: { search: picks.searchReqId }, http: { search: picks.searchReqId } },
  ];
  const pageCase = (page: (typeof pages)[number], offset: number): BenchCase => {
    const range = page.range ?? LOG_RANGE;
    const filter: Filter = { range, rangeMs: RANGES[range], ...page.filter };
    return {
      id: `requests ${page.id}${offset === 0 ? '' : ` offset ${offset}`}`,
      kind: offset === 0 ? page.kind : 'log-offset',
      path: `/analytics/requests?${query({ time_range: range, ...page.http, limit: PAGE, offset })}`,
      duck: (now) => {
        const w = where(orgId, filter, now);
        return [
          { sql: `SELECT COUNT(*) AS total FROM requests WHERE ${w.sql}`, params: w.params },
          {
            sql: `SELECT * EXCLUDE (meta_terms) FROM requests WHERE ${w.sql}
              ORDER BY ts DESC, req_id DESC LIMIT $limit OFFSET $offset`,
            params: { ...w.params, limit: PAGE, offset },
          },
        ];
      },
      count: { field: 'total', statement: (now) => countSql(orgId, filter, now) },
    };
  };
  for (const page of pages) cases.push(pageCase(page, 0));
  cases.push(pageCase(pages[0]!, OFFSET));
  return cases;
}
