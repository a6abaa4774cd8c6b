import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { MAX_TIME_RANGE_MS, defaultInterval, parseDuration, parseTimeRange } from '../analytics/durations.js';
import type { AnalyticsQuery, AnalyticsResult, GroupBy, Metric, Scope } from '../analytics/query-types.js';
import { toRequestLogRow } from '../analytics/request-row.js';
import { microAtLeast, microToPkr } from '../domain/money.js';
import { badRequest, notFound } from '../http-errors.js';
import { parseId } from '../ids.js';
import { authOf } from '../plugins/session.js';
import { isAnalyticsUnavailable, runAnalytics } from './analytics-run.js';
import { apiOf } from './api-param.js';
import { retentionOf } from './retention-horizon.js';
import { targetOf } from './target-param.js';
import {
  RequestIdParams,
  RequestLogRow,
  RequestPage,
  RequestsQuery,
  Summary,
  SummaryQuery,
  ThrottlingQuery,
  Timeseries,
  TimeseriesQuery,
  UsageThrottling,
} from '../schemas/analytics.js';
import { PAGE_SIZE_CLAMP, errors } from '../schemas/common.js';
import { Compare, CompareQuery, type PeriodFigures } from '../schemas/compare.js';
import { Dashboard, DashboardQuery } from '../schemas/dashboard.js';
import { bucketEdges, readableZone } from '../domain/reporting-zone.js';
import { findRoute, modelsOf as routeModels } from '../domain/route-models.js';
import { RELATIVE_ERROR } from '../stores/telemetry/latency-sketch.js';
import { bucketJson, cacheJson, figuresJson } from './dashboard-json.js';
import { Top, TopQuery, type TopGroup } from '../schemas/top.js';

const tags = ['analytics'];
const METRICS: Metric[] = ['volume', 'latency', 'ttft', 'tok_s', 'token_usage'];
const GROUPS: GroupBy[] = ['project', 'key', 'model', 'api'];
const STATUS_CATEGORIES = ['2xx', '3xx', '4xx', '5xx'];
/** The dashboard's buckets at most: a chart of more says nothing more, and the answer stays small. */
const MAX_DASHBOARD_BUCKETS = 2_000;

export async function analyticsRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { control, config } = app;

  /**
   * The caller's window and filters; ids of other organisations, malformed or revoked, answer 404
   * (the contract), but for a revoked key of the caller's own when the query says `include_revoked`.
   */
  async function scopeOf(
    request: FastifyRequest,
    query: {
      time_range?: string;
      project_id?: string;
      key_id?: string;
      model_alias?: string;
      target?: string;
      api?: string;
      include_revoked?: boolean;
    },
  ) {
    const { orgId } = authOf(request);
    const range = parseTimeRange(query.time_range);
    const now = config.now();
    const scope: Scope = { orgId, from: now - range.ms, to: now };
    const { horizon } = await retentionOf(app, orgId);
    if (horizon !== null) scope.horizon = horizon;
    // Their form first: a malformed target or an unknown API is refused before any lookup.
    const servedBy = targetOf(query.target);
    const api = apiOf(query.api);
    if (query.project_id !== undefined) {
      const projectId = parseId(query.project_id);
      if (!projectId || !(await control.organizations.project(orgId, projectId))) {
        throw notFound('project not found', { field: 'project_id' });
      }
      scope.projectId = projectId;
    }
    if (query.key_id !== undefined) {
      const keyId = parseId(query.key_id);
      const key = keyId && (await (query.include_revoked ? ownKey(orgId, keyId) : control.keys.get(orgId, keyId)));
      if (!key) throw notFound('key not found', { field: 'key_id' });
      scope.keyId = key.id;
      // A key is in one project: naming that project as well narrows nothing, and leaving it out
      // lets the reads use the cells by key (with two filters they would read every row).
      if (scope.projectId === key.project_id) delete scope.projectId;
    }
    if (query.model_alias !== undefined) scope.model = query.model_alias;
    if (servedBy !== undefined) scope.servedBy = servedBy;
    if (api !== undefined) scope.api = api;
    return { scope, range };
  }

  /**
   * Beyond the contract: a key of the organisation's, revoked or not. A revoked key's calls stay
   * rows (the attempts after a revocation are what an operator looks for), so they can be listed.
   */
  async function ownKey(orgId: string, keyId: string) {
    const key = await control.keys.find(keyId);
    return key?.org_id === orgId ? key : undefined;
  }

  /**
   * Beyond the contract: the request log between two instants (`from` included, `to` excluded,
   * as the activity log reads them), which a health cell or a day opens on; null when the query
   * asks for the last `time_range` instead.
   */
  function betweenOf(query: { time_range?: string; from?: string; to?: string }): { from: number; to: number } | null {
    if (query.from === undefined && query.to === undefined) return null;
    if (query.time_range !== undefined) {
      throw badRequest('give time_range, or from and to, not both', { field: 'time_range' });
    }
    if (query.from === undefined) throw badRequest('to needs from', { field: 'from' });
    if (query.to === undefined) throw badRequest('from needs to', { field: 'to' });
    // The schema's date-time admits forms Date.parse cannot read (an offset without minutes, a leap second).
    const from = Date.parse(query.from);
    if (!Number.isFinite(from)) throw badRequest('from is not a time this server can read', { field: 'from' });
    const to = Date.parse(query.to);
    if (!Number.isFinite(to)) throw badRequest('to is not a time this server can read', { field: 'to' });
    if (!(to > from)) throw badRequest('to must be after from', { field: 'to' });
    if (to - from > MAX_TIME_RANGE_MS) throw badRequest('from and to must be at most 400d apart', { field: 'to' });
    // The scope's edges are both included.
    return { from, to: to - 1 };
  }

  /** Beyond the contract: the routes document's models of one provider, as the filter binds them; 400 for a provider it does not know. */
  async function modelsOf(provider: string): Promise<string> {
    const models = routeModels((await control.routes.current()).document)
      .filter((model) => model.provider === provider)
      .map((model) => model.id);
    if (models.length === 0) throw badRequest('provider is not in the model catalogue', { field: 'provider' });
    return JSON.stringify(models);
  }

  const reportingZone = async (orgId: string) => readableZone(await control.organizations.reportingZone(orgId));

  /** The names a request-log row shows beside its key and project ids. */
  const namesOf = async (orgId: string) => ({
    keys: new Map((await control.keys.list(orgId)).map((key) => [key.id, key.name])),
    projects: new Map((await control.organizations.projects(orgId)).map((project) => [project.id, project.name])),
  });

  const run = <Q extends AnalyticsQuery>(query: Q, reply: FastifyReply) => runAnalytics(app, query, reply);

  app.get(
    '/analytics/summary',
    { schema: { tags, querystring: SummaryQuery, response: { 200: Summary, ...errors(400, 401, 404, 422, 503) } } },
    async (request, reply) => {
      const { scope, range } = await scopeOf(request, request.query);
      const summary = await run({ kind: 'summary', scope }, reply);
      return {
        time_range: range.text,
        total_requests: summary.requests,
        avg_e2e_latency_ms: summary.avgTotalMs,
        avg_ttft_ms: summary.avgTtftMs,
        avg_tokens_per_sec: summary.tokensPerSecond,
        total_token_usage: summary.totalTokens,
        ...(scope.keyId === undefined ? {} : { total_cost_pkr: microToPkr(summary.costMicro) }),
      };
    },
  );

  app.get(
    '/analytics/timeseries',
    {
      schema: { tags, querystring: TimeseriesQuery, response: { 200: Timeseries, ...errors(400, 401, 404, 422, 503) } },
    },
    async (request, reply) => {
      const query = request.query;
      const metric = (query.metric ?? 'volume') as Metric;
      if (!METRICS.includes(metric)) {
        throw badRequest(`metric must be one of ${METRICS.join(', ')}`, { field: 'metric' });
      }
      const groupBy = (query.group_by ?? null) as GroupBy | null;
      if (groupBy !== null && !GROUPS.includes(groupBy)) {
        throw badRequest(`group_by must be one of ${GROUPS.join(', ')}`, { field: 'group_by' });
      }
      const { scope, range } = await scopeOf(request, query);
      const interval =
        query.interval === undefined
          ? defaultInterval(range.ms)
          : { text: query.interval, ms: parseDuration('interval', query.interval) };
      const series = await run({ kind: 'timeseries', scope, metric, intervalMs: interval.ms, groupBy }, reply);
      // The worker sent `data` as JSON; only the small envelope is built here.
      const head = JSON.stringify({ metric, interval: interval.text, group_by: groupBy, time_range: range.text });
      const open = `${head.slice(0, -1)},"data":`;
      const body =
        typeof series.json === 'string'
          ? `${open}${series.json}}`
          : Buffer.concat([Buffer.from(open), series.json, Buffer.from('}')]);
      // A string or Buffer payload skips Fastify's serializer: the schema still documents the shape.
      return reply.type('application/json; charset=utf-8').send(body as unknown as Timeseries);
    },
  );

  app.get(
    '/analytics/requests',
    {
      schema: { tags, querystring: RequestsQuery, response: { 200: RequestPage, ...errors(400, 401, 404, 422, 503) } },
    },
    async (request, reply) => {
      const query = request.query;
      const category = query.status_category;
      if (category !== undefined && !STATUS_CATEGORIES.includes(category)) {
        throw badRequest(`status_category must be one of ${STATUS_CATEGORIES.join(', ')}`, {
          field: 'status_category',
        });
      }
      const { scope } = await scopeOf(request, query);
      const between = betweenOf(query);
      if (between) Object.assign(scope, between);
      const limit = Math.min(query.limit ?? 50, PAGE_SIZE_CLAMP);
      const offset = query.offset ?? 0;
      const page = await run(
        {
          kind: 'requests',
          filter: {
            ...scope,
            ...(query.provider === undefined ? {} : { models: await modelsOf(query.provider) }),
            ...(query.model === undefined ? {} : { model: query.model }),
            ...(category === undefined ? {} : { statusClass: Number(category[0]) }),
            ...(query.termination_reason === undefined ? {} : { terminationReason: query.termination_reason }),
            ...(query.min_cost_pkr === undefined ? {} : { minCostMicro: microAtLeast(query.min_cost_pkr) }),
            ...(query.search === undefined ? {} : { search: query.search.toLowerCase() }),
          },
          limit,
          offset,
        },
        reply,
      );
      const names = await namesOf(scope.orgId);
      return { total: page.total, limit, offset, requests: page.rows.map((row) => toRequestLogRow(row, names)) };
    },
  );

  // Beyond the contract: one request by its exact id, whatever its age (the primary key: no
  // search, no window), as the request log shows it; another organisation's is not found.
  app.get(
    '/analytics/requests/:req_id',
    {
      schema: {
        tags,
        params: RequestIdParams,
        response: { 200: RequestLogRow, ...errors(400, 401, 404, 503) },
      },
    },
    async (request, reply) => {
      const { orgId } = authOf(request);
      const { horizon } = await retentionOf(app, orgId);
      const row = await run(
        { kind: 'request', orgId, reqId: request.params.req_id, horizon: horizon ?? undefined },
        reply,
      );
      if (!row) throw notFound('request not found', { field: 'req_id' });
      return toRequestLogRow(row, await namesOf(orgId));
    },
  );

  /** The window of the same length just before `scope`'s, both edges included as the window's are. */
  const previousOf = (scope: Scope) => {
    const length = scope.to - scope.from;
    return { from: scope.from - length - 1, to: scope.from - 1 };
  };

  app.get(
    '/analytics/compare',
    { schema: { tags, querystring: CompareQuery, response: { 200: Compare, ...errors(400, 401, 404, 422, 503) } } },
    async (request, reply): Promise<Compare> => {
      const { scope, range } = await scopeOf(request, request.query);
      const { current, previous } = await run({ kind: 'compare', scope, previous: previousOf(scope) }, reply);
      const figures = (s: typeof current): PeriodFigures => ({
        total_requests: s.requests,
        avg_e2e_latency_ms: s.avgTotalMs,
        avg_ttft_ms: s.avgTtftMs,
        avg_tokens_per_sec: s.tokensPerSecond,
        total_token_usage: s.totalTokens,
        cost_micro: s.costMicro,
      });
      return { time_range: range.text, current: figures(current), previous: figures(previous) };
    },
  );

  // Beyond the contract: the dashboard's series in the organisation's reporting zone.
  app.get(
    '/analytics/dashboard',
    { schema: { tags, querystring: DashboardQuery, response: { 200: Dashboard, ...errors(400, 401, 404, 422, 503) } } },
    async (request, reply): Promise<Dashboard> => {
      const query = request.query;
      const { scope, range } = await scopeOf(request, query);
      const interval =
        query.interval === undefined
          ? defaultInterval(range.ms)
          : { text: query.interval, ms: parseDuration('interval', query.interval) };
      if (range.ms / interval.ms > MAX_DASHBOARD_BUCKETS) {
        throw badRequest(`interval gives more than ${MAX_DASHBOARD_BUCKETS} buckets over time_range`, {
          field: 'interval',
        });
      }
      const zone = await reportingZone(scope.orgId);
      let edges: number[];
      try {
        edges = bucketEdges(zone, scope.from, scope.to, interval.ms);
      } catch (error) {
        if (!(error instanceof RangeError)) throw error;
        throw badRequest('interval must divide a day (for example 15m or 6h) or be whole days (1d, 7d)', {
          field: 'interval',
        });
      }
      const result = await run({ kind: 'dashboard', scope, edges, previous: previousOf(scope) }, reply);
      const { document } = await control.routes.current();
      return {
        time_range: range.text,
        interval: interval.text,
        time_zone: zone,
        from: new Date(scope.from).toISOString(),
        to: new Date(scope.to).toISOString(),
        percentile_relative_error: RELATIVE_ERROR,
        buckets: result.points.map((point, index) => bucketJson(zone, edges[index]!, point)),
        totals: { current: figuresJson(result.current), previous: figuresJson(result.previous) },
        cache: result.cache.map((sums) => cacheJson(sums, findRoute(document, sums.model)?.price)),
      };
    },
  );

  app.get(
    '/analytics/top',
    { schema: { tags, querystring: TopQuery, response: { 200: Top, ...errors(400, 401, 404, 422, 503) } } },
    async (request, reply): Promise<Top> => {
      const query = request.query;
      const { scope, range } = await scopeOf(request, query);
      // Each group's trend line: about 30 points (up to 57 for 400 days) in the reporting zone's buckets.
      const zone = await reportingZone(scope.orgId);
      const trendInterval = defaultInterval(range.ms, 30);
      const trendEdges = bucketEdges(zone, scope.from, scope.to, trendInterval.ms);
      const rows = await run(
        { kind: 'top', scope, groupBy: query.group_by, previous: previousOf(scope), trendEdges },
        reply,
      );
      const sort = query.sort ?? 'cost';
      const names =
        query.group_by === 'key'
          ? new Map((await control.keys.list(scope.orgId)).map((key) => [key.id, key.name]))
          : query.group_by === 'project'
            ? new Map((await control.organizations.projects(scope.orgId)).map((project) => [project.id, project.name]))
            : null;
      const figures = (r: Omit<(typeof rows)[number], 'group' | 'trend' | 'latency'>) => ({
        requests: r.requests,
        cost_micro: r.costMicro,
        errors: r.errors,
        mean_latency_ms: r.requests > 0 ? r.totalMs / r.requests : null,
        previous_requests: r.previousRequests,
        previous_cost_micro: r.previousCostMicro,
      });
      const sum = (list: typeof rows) =>
        list.reduce(
          (all, r) => ({
            requests: all.requests + r.requests,
            totalMs: all.totalMs + r.totalMs,
            costMicro: all.costMicro + r.costMicro,
            errors: all.errors + r.errors,
            previousRequests: all.previousRequests + r.previousRequests,
            previousCostMicro: all.previousCostMicro + r.previousCostMicro,
          }),
          { requests: 0, totalMs: 0, costMicro: 0, errors: 0, previousRequests: 0, previousCostMicro: 0 },
        );
      // Groups with traffic in this window, largest first (ties by group, so the order is stable);
      // the others add up the rest, those seen in the previous window only included, so that the
      // groups and the others always add up to the total.
      const limit = query.limit ?? 10;
      const shown = rows
        .filter((r) => r.requests > 0)
        .sort(
          (a, b) =>
            (sort === 'cost' ? b.costMicro - a.costMicro : b.requests - a.requests) ||
            b.requests - a.requests ||
            String(a.group).localeCompare(String(b.group)),
        )
        .slice(0, limit);
      const rest = rows.filter((r) => !shown.includes(r));
      return {
        time_range: range.text,
        group_by: query.group_by,
        sort,
        trend_interval: trendInterval.text,
        time_zone: zone,
        total: figures(sum(rows)),
        groups: shown.map((r): TopGroup => ({
          group: r.group,
          name: names && r.group !== null ? (names.get(r.group) ?? null) : null,
          ...figures(r),
          p95_latency_ms: r.latency?.[1] ?? null,
          trend: r.trend,
        })),
        others: rest.length === 0 ? null : { count: rest.length, ...figures(sum(rest)) },
      };
    },
  );

  app.get(
    '/admin/usage-throttling',
    { schema: { tags, querystring: ThrottlingQuery, response: { 200: UsageThrottling, ...errors(400, 401, 422) } } },
    async (request, reply) => {
      const { orgId } = authOf(request);
      const range = parseTimeRange(request.query.time_range);
      const now = config.now();
      const keys = await control.keys.list(orgId);
      // Telemetry-derived figures are unknown (null) while the store is unreachable; the rest still answers.
      let counts: AnalyticsResult<{ kind: 'throttling' } & AnalyticsQuery> | null = null;
      try {
        counts = await run(
          {
            kind: 'throttling',
            orgId,
            keyIds: keys.map((key) => key.id),
            from: now - range.ms,
            to: now,
          },
          reply,
        );
      } catch (error) {
        if (!isAnalyticsUnavailable(error)) throw error;
      }
      return {
        time_range: range.text,
        keys: keys.map((key) => ({
          id: key.id,
          name: key.name,
          key_prefix: key.key_prefix,
          rate_limit_rpm: key.rate_limit_rpm,
          requests_last_minute: counts ? (counts.lastMinute[key.id] ?? 0) : null,
          throttled_requests: counts ? (counts.throttled[key.id] ?? 0) : null,
          credit_limit_cents: key.credit_limit_micro,
          spent_cents: key.spent_micro,
        })),
      };
    },
  );
}
