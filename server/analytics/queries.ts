import { REQUEST_COLUMNS, type RequestRecord } from '../stores/telemetry/request-record.js';
import { codeOf, hasTextIds } from '../stores/telemetry/request-rows.js';
import type {
  AnalyticsQuery,
  AnalyticsResult,
  BurnResult,
  Metric,
  RequestFilter,
  RequestPage,
  Scope,
  SeriesJson,
  SummaryResult,
  ThrottlingResult,
  TopRow,
} from './query-types.js';
import { cacheByModel, dashboardBuckets, groupTrends } from './dashboard.js';
import { keyImpact } from './key-impact.js';
import { providerHealth } from './health.js';
import { routeTargets } from './route-targets.js';
import { reconcileDay, reconcileSpend } from './reconcile-telemetry.js';
import { countableFromRollups, rollupSource } from './rollup-sql.js';
import {
  BY_FIRST_ROW,
  BY_SHARED_TERM,
  FROM_MATCHES,
  HOLDS_SHARED_TERM,
  matchParams,
  matchSql,
  SearchIndex,
  type SearchMatch,
} from './search-index.js';
import {
  pgCountMatches,
  pgMatchParams,
  pgSearchCondition,
  pgSearchMatch,
  type PgSearchMatch,
} from './postgres-search.js';
import type { AnalyticsSql, Dialect, Params } from './sql.js';
import { SqliteSql } from './sqlite-sql.js';

/**
 * Each metric's value from sums and counts over rollup cells and raw rows (rollup-sql.ts):
 * `sum` wraps a column in SUM() where rows are grouped, or gives it as is for a row that
 * is already the whole point.
 */
const METRIC_SQL: Record<Metric, (sum: (column: string) => string) => string> = {
  volume: (sum) => sum('requests'),
  latency: (sum) => `${sum('total_ms')} / NULLIF(${sum('requests')}, 0)`,
  // A bucket with no first-token time has no mean.
  ttft: (sum) => `${sum('ttft_ms')} / NULLIF(${sum('ttft_count')}, 0)`,
  // Generation time sums to zero, unknown, exactly when no token was counted; a cell less its
  // outside rows (windows.ts, `complemented`) may leave a rounding's worth of it instead.
  tok_s: (sum) => `NULLIF(${sum('speed_tokens')}, 0) * 1000.0 / NULLIF(${sum('speed_ms')}, 0)`,
  token_usage: (sum) => sum('tokens'),
};

/** The largest finite double: values beyond it are infinite. */
const DOUBLE_MAX = '1.7976931348623157e308';

/** Whether a row's metadata, key or value, holds the search text (casefolded, `@search`). */
const inMetadata = (d: Dialect) => `EXISTS (SELECT 1 FROM ${d.entriesOf('requests.metadata', 'm')}
  WHERE ${d.contains(d.folded('m.key'), '@search')} OR ${d.contains(d.folded('m.value'), '@search')})`;

const inReqId = (d: Dialect) => d.contains(d.folded('req_id'), '@search');

/** The search read from the rows, when no index answers it (search-index.ts). */
const searchSql = (d: Dialect) => `(${inReqId(d)} OR ${inMetadata(d)})`;

/**
 * The same, first looking for the text in the metadata's JSON as it is stored, which costs a
 * fraction of taking it apart. Keys and values are strings; a JSON writer (this one, or another
 * program writing the request log) keeps every character as it is but for `"`, `\`, `/` and
 * control characters, which it may write as two-character escapes, and any character at all,
 * which it may write as `\uXXXX`. So in a row whose JSON has no `\u`, a text of ASCII letters,
 * digits and other punctuation (SAFE_TEXT; not non-ASCII, whose folding can depend on the
 * neighbouring characters) is in a key or value only if it is in the stored JSON.
 */
const safeSearchSql = (d: Dialect) => `(${inReqId(d)} OR (${d.metadataMayHold()} AND ${inMetadata(d)}))`;

const SAFE_TEXT = /^[\w .,:;@#+=!?*()[\]{}|~^$%<>&'-]*$/;

/**
 * The filter as SQL over `requests`. `count`: for counting its rows, which are read through the
 * index by cost when it has a least cost: the window's bounds are then kept from the planner,
 * which would take them to the index by time and read every row of the window.
 */
function where(filter: RequestFilter, dialect: Dialect, { count = false } = {}): string {
  const ts = count && filter.minCostMicro !== undefined ? dialect.unindexed('ts') : 'ts';
  const clauses = [dialect.rowIs('org_id', 'orgId'), `${ts} >= @from`, `${ts} <= @to`];
  if (filter.projectId !== undefined) clauses.push(dialect.rowIs('project_id', 'projectId'));
  if (filter.keyId !== undefined) clauses.push(dialect.rowIs('key_id', 'keyId'));
  if (filter.model !== undefined) clauses.push(dialect.rowIs('model', 'model'));
  if (filter.servedBy !== undefined) clauses.push('served_by = @servedBy');
  if (filter.api !== undefined) clauses.push('api = @api');
  if (filter.models !== undefined) clauses.push(dialect.rowIn('model', 'models'));
  if (filter.statusClass !== undefined) clauses.push('status >= @statusFrom AND status < @statusTo');
  if (filter.terminationReason !== undefined) clauses.push('termination_reason = @terminationReason');
  if (filter.minCostMicro !== undefined) clauses.push(dialect.costAtLeast('minCostMicro'));
  if (filter.search !== undefined) {
    clauses.push(SAFE_TEXT.test(filter.search) ? safeSearchSql(dialect) : searchSql(dialect));
  }
  return clauses.join(' AND ');
}

/** Whether a filter (its search taken out) is its window alone: no other part narrows it. */
const onlyWindow = (filter: Omit<RequestFilter, 'search'>) =>
  Object.entries(filter).every(([name, value]) => value === undefined || ['orgId', 'from', 'to'].includes(name));

/** The organisation a query reads, when retention bounds it. */
function orgOf(query: AnalyticsQuery): string | null {
  switch (query.kind) {
    case 'summary':
    case 'timeseries':
    case 'compare':
    case 'top':
    case 'dashboard':
      return query.scope.orgId;
    case 'requests':
      return query.filter.orgId;
    case 'request':
    case 'burn':
    case 'reconcile_day':
      return query.orgId;
    default:
      return null;
  }
}

/** What a store records of what it no longer holds whole: retention's horizon, the fine cells' start. */
interface StoredBounds {
  horizon: number | null;
  fineFrom: number | null;
}

/** `asked` with its horizon no earlier than the stored one. */
function bounded<T extends { horizon?: number }>(asked: T, { horizon }: StoredBounds): T {
  if (horizon === null) return asked;
  return { ...asked, horizon: asked.horizon === undefined ? horizon : Math.max(asked.horizon, horizon) };
}

/** `asked` reading the fine usage cells from their stored start, for the reads of usage cells by time. */
const fineFrom = <T extends { fineFrom?: number }>(asked: T, stored: StoredBounds): T =>
  stored.fineFrom === null ? asked : { ...asked, fineFrom: stored.fineFrom };

/** `query` bounded by what the store records (`StoredBounds`). */
function boundedBy(query: AnalyticsQuery, stored: StoredBounds): AnalyticsQuery {
  switch (query.kind) {
    case 'summary':
    case 'timeseries':
    case 'compare':
    case 'top':
    case 'dashboard':
      return { ...query, scope: fineFrom(bounded(query.scope, stored), stored) };
    case 'requests':
      // Its counts read hourly and daily cells only; a filter with no other part is its window alone (`onlyWindow`).
      return { ...query, filter: bounded(query.filter, stored) };
    case 'request':
      return bounded(query, stored);
    case 'burn':
    case 'reconcile_day':
      return fineFrom(bounded(query, stored), stored);
    case 'impact':
      return fineFrom(query, stored);
    default:
      return query;
  }
}

/** A list of rows starts at the retention horizon: the rows before it are deleted or about to be. */
function sinceHorizon(filter: RequestFilter): RequestFilter {
  const { horizon, ...rest } = filter;
  return horizon === undefined || horizon <= filter.from ? rest : { ...rest, from: horizon };
}

function bindings(filter: RequestFilter): Record<string, unknown> {
  const { statusClass, ...rest } = filter;
  return statusClass === undefined
    ? rest
    : { ...rest, statusFrom: statusClass * 100, statusTo: statusClass * 100 + 100 };
}

/** Runs analytics queries on one connection to a request-log store. */
export class AnalyticsQueries {
  /** SQLite's own search index (PostgreSQL's is postgres-search.ts). */
  private readonly search: SearchIndex | null;

  constructor(private readonly sql: AnalyticsSql) {
    this.search = sql instanceof SqliteSql ? new SearchIndex((text) => sql.statement(text)) : null;
  }

  async run<Q extends AnalyticsQuery>(query: Q): Promise<AnalyticsResult<Q>> {
    const answer = async () => this.answer(await this.withDeleted(query));
    // On SQLite the bounds and the answer are read in one transaction: the fine cells before a
    // new start are deleted after it is recorded (fine-cells.ts), so a read must not pair the old
    // start with the cells left. PostgreSQL's are never deleted: its start moves only with a copy.
    const result = this.sql.dialect.name === 'sqlite' ? await this.sql.snapshot(answer) : await answer();
    return result as AnalyticsResult<Q>;
  }

  /**
   * The query bounded by how far retention has deleted its organisation's rows, where that is
   * later than the horizon it was asked with (a retention lengthened again brings no row back),
   * and by where the store's fine cells start.
   */
  private async withDeleted(query: AnalyticsQuery): Promise<AnalyticsQuery> {
    const orgId = orgOf(query);
    // The other queries read no rollup cell by time and no row before a horizon.
    if (orgId === null && query.kind !== 'impact') return query;
    const stored = await this.sql.get<{ horizon: number | null; fineFrom: number | null }>(
      `SELECT (SELECT horizon FROM retention_horizons WHERE org_id = @orgId) AS horizon,
        (SELECT since FROM fine_cells) AS "fineFrom"`,
      { orgId },
    );
    const number = (value: number | null | undefined) => (value === null || value === undefined ? null : Number(value));
    return boundedBy(query, { horizon: number(stored?.horizon), fineFrom: number(stored?.fineFrom) });
  }

  private answer(query: AnalyticsQuery): Promise<unknown> {
    const sql = this.sql;
    switch (query.kind) {
      case 'summary':
        return this.summary(query.scope);
      case 'timeseries':
        return this.timeseries(query);
      case 'requests':
        // One read transaction: the total, the index's matches and the page see the same rows
        // even when the writer commits between their statements.
        return sql.snapshot(() => this.requests(sinceHorizon(query.filter), query.limit, query.offset));
      case 'throttling':
        return this.throttling(query);
      case 'compare': {
        const { scope, previous } = query;
        return sql.snapshot(async () => ({
          current: await this.summary(scope),
          previous: await this.summary({ ...scope, ...previous }),
        }));
      }
      case 'top':
        return sql.snapshot(() => this.top(query));
      case 'dashboard': {
        const { scope, edges, previous } = query;
        // A window read as one bucket: its percentiles are over all its requests.
        const asOne = async (window: Scope) =>
          (await dashboardBuckets(sql, window, [window.from, window.to + 1])).whole;
        // Past a retention horizon a window is read from whole cells alone (windows.ts, keptSegments),
        // which its buckets would cut elsewhere: there it is read as one bucket, not as theirs merged.
        const cut = scope.horizon !== undefined && scope.horizon > scope.from;
        return sql.snapshot(async () => {
          const { points, whole } = await dashboardBuckets(sql, scope, edges);
          return {
            points,
            current: cut ? await asOne(scope) : whole,
            previous: await asOne({ ...scope, ...previous }),
            cache: await cacheByModel(sql, scope),
          };
        });
      }
      case 'impact':
        // One read transaction: the counts, the last use and the callers see the same rows.
        return sql.snapshot(() => keyImpact(sql, query));
      case 'request':
        return sql
          .get(
            `SELECT ${REQUEST_COLUMNS.join(', ')} FROM requests WHERE ${sql.dialect.requestIs('reqId')} AND org_id = @orgId AND ts >= @horizon`,
            // A row past the retention horizon is deleted or about to be: as if it were.
            { reqId: query.reqId, orgId: query.orgId, horizon: query.horizon ?? Number.MIN_SAFE_INTEGER },
          )
          .then((row) => row ?? null);
      case 'reconcile_day':
        // One read transaction: the totals, the cells and the rows are the same moment's.
        return sql.snapshot(() => reconcileDay(sql, query));
      case 'reconcile_spend':
        return sql.snapshot(() => reconcileSpend(sql, query));
      case 'health':
        // One read transaction: the window's cells and the last successes are the same moment's.
        return sql.snapshot(() => providerHealth(sql, query));
      case 'route_targets':
        return routeTargets(sql, query);
      case 'burn':
        // One read transaction: every day sees the same rows.
        return sql.snapshot(() => this.burn(query));
    }
    throw new Error('unknown analytics query');
  }

  private async summary(scope: Scope): Promise<SummaryResult> {
    const source = rollupSource(this.sql.dialect, scope);
    const row = (await this.sql.get<
      SummaryResult & {
        speedTokens: number | null;
        speedMs: number | null;
      }
    >(
      `SELECT COALESCE(SUM(requests), 0) AS requests, SUM(total_ms) / NULLIF(SUM(requests), 0) AS "avgTotalMs",
        SUM(ttft_ms) / NULLIF(SUM(ttft_count), 0) AS "avgTtftMs", SUM(speed_tokens) AS "speedTokens",
        SUM(speed_ms) AS "speedMs", COALESCE(SUM(tokens), 0) AS "totalTokens",
        COALESCE(SUM(cost_micro), 0) AS "costMicro"
      FROM (${source.sql}) AS source`,
      source.params,
    ))!;
    const { speedTokens, speedMs, ...summary } = row;
    const speed = !speedTokens || !speedMs ? null : (speedTokens * 1000) / speedMs;
    return { ...summary, tokensPerSecond: speed !== null && Number.isFinite(speed) ? speed : null };
  }

  private async timeseries(query: Extract<AnalyticsQuery, { kind: 'timeseries' }>): Promise<SeriesJson> {
    const source = rollupSource(this.sql.dialect, query.scope, {
      intervalMs: query.intervalMs,
      groupBy: query.groupBy,
    });
    const metric = METRIC_SQL[query.metric];
    const group = query.groupBy ? 'grp' : 'NULL';
    // A value that is not finite is as unknown as null.
    const finite = (part: string) => `SELECT bucket, "group", value FROM (${part}) AS part
      WHERE value BETWEEN -${DOUBLE_MAX} AND ${DOUBLE_MAX}`;
    const edges = finite(`SELECT bucket, ${group} AS "group", ${metric((c) => `SUM(${c})`)} AS value
      FROM (${source.sql}) AS source GROUP BY bucket, "group"`);
    const points = source.points && {
      sql: finite(
        `SELECT bucket, ${group} AS "group", ${metric((c) => c)} AS value FROM (${source.points.sql}) AS points`,
      ),
      from: source.points.from,
    };
    return (await this.sql.get<SeriesJson>(this.sql.dialect.seriesJson({ edges, points }), source.params))!;
  }

  private async requests(filter: RequestFilter, limit: number, offset: number): Promise<RequestPage> {
    if (filter.search !== undefined && this.sql.dialect.name === 'postgres') {
      const match = await pgSearchMatch(this.sql, filter.orgId, filter.search);
      if (match) return this.pgSearchPage(filter, match, limit, offset);
    }
    if (filter.search !== undefined && this.search) {
      // The window's rows counted as the summary counts them: its rollups reach down to
      // minutes, the request log's to hours (up to half an hour of rows read at each edge).
      const windowRows = (await this.summary({ orgId: filter.orgId, from: filter.from, to: filter.to })).requests;
      const match = this.search.match(filter.orgId, filter.search, windowRows, filter);
      if (match) return this.searchPage(filter, match, limit, offset, windowRows);
    }
    const { total } = await this.count(filter);
    // Past the last row there is no page to look for (a search that matches nothing would
    // read the whole window a second time).
    if (offset >= total) return { total, rows: [] };
    return { total, rows: await this.deepPage(filter, limit, offset) };
  }

  /**
   * A page past the first: its rows' times read first, then the rows between its newest time and
   * its oldest. Ordering by time alone, the times come from the filter's index without a row read
   * where it covers the filter (the log's own pages, a key's); the full order (time, then id) of
   * 10,000 rows skipped would read each of them. Rows at the page's newest time that precede it are
   * counted apart, in that time alone; a page whose rows share one time is read as any other.
   */
  private async deepPage(filter: RequestFilter, limit: number, offset: number): Promise<RequestRecord[]> {
    const { dialect } = this.sql;
    const whole = () => this.page(where(filter, dialect), bindings(filter), limit, offset);
    if (offset === 0) return whole();
    const times = await this.sql.all<{ ts: number }>(
      `SELECT ts FROM requests WHERE ${where(filter, dialect)} ORDER BY ts DESC LIMIT @limit OFFSET @offset`,
      { ...bindings(filter), limit, offset },
    );
    const newest = times[0]?.ts;
    const oldest = times.at(-1)?.ts;
    if (newest === undefined || oldest === undefined || newest === oldest) return whole();
    const atNewest = { ...filter, from: newest, to: newest };
    const { tied } = (await this.sql.get<{ tied: number }>(
      `SELECT COUNT(*) AS tied FROM requests WHERE ${where(atNewest, dialect)}`,
      bindings(atNewest),
    ))!;
    const span = { ...filter, from: oldest, to: newest };
    const skipped = tied - times.filter((row) => row.ts === newest).length;
    return this.page(where(span, dialect), bindings(span), limit, skipped);
  }

  /** A page of rows in log order: their ids first, from an index where the filter allows, then the rows. */
  private async page(
    condition: string,
    params: Params,
    limit: number,
    offset: number,
    source = 'requests',
  ): Promise<RequestRecord[]> {
    if (this.sql.dialect.name === 'postgres') {
      return this.sql.all<RequestRecord>(
        `SELECT ${REQUEST_COLUMNS.join(', ')} FROM requests WHERE ${condition}
        ORDER BY ts DESC, req_id DESC LIMIT @limit OFFSET @offset`,
        { ...params, limit, offset },
      );
    }
    // Ties in the order of the stored ids, when it is theirs: unless the organisation has an id
    // stored as text (request-rows.ts, storedRequestId).
    const { textIds } = (await this.sql.get<{ textIds: number }>(`SELECT ${hasTextIds(codeOf('@orgId'))} AS textIds`, {
      orgId: params.orgId,
    }))!;
    return this.sql.all<RequestRecord>(
      `SELECT ${REQUEST_COLUMNS.join(', ')} FROM requests WHERE rowid IN (
        SELECT rowid FROM ${source} WHERE ${condition}
        ORDER BY ts DESC, ${textIds ? 'req_id' : 'req_key'} DESC LIMIT @limit OFFSET @offset)
      ORDER BY ts DESC, req_id DESC`,
      { ...params, limit, offset },
    );
  }

  /** A search answered from its index; `windowRows`: the rows of its window, whatever the other filters. */
  private async searchPage(
    searched: RequestFilter,
    match: SearchMatch,
    limit: number,
    offset: number,
    windowRows: number,
  ): Promise<RequestPage> {
    const { search: _, ...filter } = searched;
    const condition = where(filter, this.sql.dialect);
    const params = { ...bindings(filter), ...matchParams(match) };
    const windowOnly = onlyWindow(filter);
    let total = 0;
    if (match.metadata !== null) {
      total += windowOnly
        ? this.search!.countShared(match, filter.orgId, filter.from, filter.to)
        : await this.countWhere(`${condition} AND ${BY_SHARED_TERM}`, params, FROM_MATCHES);
    }
    if (match.firstRows.length > 0) {
      // First rows of terms, less those the shared terms found already.
      const notByMetadata = match.metadata === null ? '' : `AND NOT ${HOLDS_SHARED_TERM}`;
      total += await this.countWhere(`${BY_FIRST_ROW} AND ${condition} ${notByMetadata}`, params, FROM_MATCHES);
    }
    if (offset >= total) return { total, rows: [] };
    // Reading rows newest first and checking each costs about (offset + limit) / share of
    // the window's rows; reading the matches from the index and sorting them, about `total`.
    const filtered = windowOnly ? windowRows : (await this.count(filter)).total;
    const share = total / Math.max(total, filtered);
    const rows =
      (offset + limit) / share < total
        ? await this.page(where(searched, this.sql.dialect), bindings(searched), limit, offset)
        : await this.page(`${condition} AND ${matchSql(match)}`, params, limit, offset, FROM_MATCHES);
    return { total, rows };
  }

  /** A search answered from PostgreSQL's index (postgres-search.ts). */
  private async pgSearchPage(
    searched: RequestFilter,
    match: PgSearchMatch,
    limit: number,
    offset: number,
  ): Promise<RequestPage> {
    const { search, ...filter } = searched;
    const inFilter = where(filter, this.sql.dialect);
    const params = { ...bindings(filter), ...pgMatchParams(match, search!) };
    const windowOnly = onlyWindow(filter);
    const total = windowOnly
      ? await pgCountMatches(this.sql, match, filter, search!)
      : await this.countWhere(`${inFilter} AND ${pgSearchCondition(match, { scan: false })}`, params);
    if (offset >= total) return { total, rows: [] };
    // As on SQLite (searchPage): reading rows newest first costs about (offset + limit) / share of
    // the filter's rows; reading the matches through the indexes and sorting them, about `total`.
    // (Without sets the rows are found by their rare strings alone, whatever the share.)
    const filtered = match.sets.length === 0 ? total : (await this.count(filter)).total;
    const share = total / Math.max(total, filtered);
    const scan = (offset + limit) / share < total;
    const condition = `${inFilter} AND ${pgSearchCondition(match, { scan })}`;
    return { total, rows: await this.page(condition, params, limit, offset) };
  }

  private async countWhere(condition: string, params: Params, source = 'requests'): Promise<number> {
    return (await this.sql.get<{ n: number }>(`SELECT COUNT(*) AS n FROM ${source} WHERE ${condition}`, params))!.n;
  }

  /** The exact number of rows a filter matches: from the rollups when they are keyed by all its parts. */
  private async count(filter: RequestFilter): Promise<{ total: number }> {
    if (!countableFromRollups(filter))
      return { total: await this.countWhere(where(filter, this.sql.dialect, { count: true }), bindings(filter)) };
    const source = rollupSource(this.sql.dialect, filter, { counts: true });
    return (await this.sql.get<{ total: number }>(
      `SELECT COALESCE(SUM(requests), 0) AS total FROM (${source.sql}) AS source`,
      source.params,
    ))!;
  }

  private async throttling(query: Extract<AnalyticsQuery, { kind: 'throttling' }>): Promise<ThrottlingResult> {
    const params = { orgId: query.orgId, keys: JSON.stringify(query.keyIds), from: query.from, to: query.to };
    const perKey = async (condition: string) =>
      Object.fromEntries(
        (
          await this.sql.all<{ key_id: string; n: number }>(
            `SELECT key_id, COUNT(*) AS n FROM requests
            WHERE ${this.sql.dialect.rowIs('org_id', 'orgId')} AND ${this.sql.dialect.rowIn('key_id', 'keys')} AND ${condition}
            GROUP BY key_id ORDER BY key_id`,
            params,
          )
        ).map((row) => [row.key_id, row.n]),
      );
    return {
      lastMinute: await perKey('ts > @to - 60000 AND ts <= @to'),
      throttled: await perKey('ts >= @from AND ts <= @to AND status = 429'),
    };
  }

  /** Every group's figures in the window and the one before, from the rollups (rows at the edges). */
  private async top(query: Extract<AnalyticsQuery, { kind: 'top' }>): Promise<TopRow[]> {
    const { scope, groupBy } = query;
    const rows = new Map<string | null, TopRow>();
    const row = (group: string | null) => {
      let found = rows.get(group);
      if (!found) {
        found = {
          group,
          requests: 0,
          totalMs: 0,
          costMicro: 0,
          errors: 0,
          previousRequests: 0,
          previousCostMicro: 0,
          trend: query.trendEdges.slice(1).map(() => 0),
          latency: null,
        };
        rows.set(group, found);
      }
      return found;
    };
    const usage = (window: Scope) => {
      const source = rollupSource(this.sql.dialect, window, { groupBy });
      return this.sql.all<{ grp: string | null; requests: number; totalMs: number; costMicro: number }>(
        `SELECT grp, SUM(requests) AS requests, SUM(total_ms) AS "totalMs", SUM(cost_micro) AS "costMicro"
        FROM (${source.sql}) AS source GROUP BY grp ORDER BY grp NULLS FIRST`,
        source.params,
      );
    };
    for (const u of await usage(scope))
      Object.assign(row(u.grp), { requests: u.requests, totalMs: u.totalMs, costMicro: u.costMicro });
    for (const u of await usage({ ...scope, ...query.previous })) {
      Object.assign(row(u.grp), { previousRequests: u.requests, previousCostMicro: u.costMicro });
    }
    const failed = rollupSource(this.sql.dialect, { ...scope, statusClass: 5 }, { counts: true, groupBy });
    const errors = await this.sql.all<{ grp: string | null; n: number }>(
      `SELECT grp, SUM(requests) AS n FROM (${failed.sql}) AS source GROUP BY grp ORDER BY grp NULLS FIRST`,
      failed.params,
    );
    for (const e of errors) row(e.grp).errors = e.n;
    const trends = await groupTrends(this.sql, scope, groupBy, query.trendEdges);
    for (const [group, { trend, latency }] of trends) Object.assign(row(group), { trend, latency });
    return [...rows.values()];
  }

  /** Each day's cost by key, from the rollups by key (whole cells inside, rows at the edges). */
  private async burn(query: Extract<AnalyticsQuery, { kind: 'burn' }>): Promise<BurnResult> {
    const result: BurnResult = { byKey: {}, organization: query.days.map(() => 0) };
    for (const [index, day] of query.days.entries()) {
      const source = rollupSource(
        this.sql.dialect,
        { orgId: query.orgId, from: day.from, to: day.to, horizon: query.horizon, fineFrom: query.fineFrom },
        { groupBy: 'key' },
      );
      const rows = await this.sql.all<{ keyId: string | null; cost: number }>(
        `SELECT grp AS "keyId", COALESCE(SUM(cost_micro), 0) AS cost FROM (${source.sql}) AS source GROUP BY grp ORDER BY grp NULLS FIRST`,
        source.params,
      );
      for (const { keyId, cost } of rows) {
        result.organization[index]! += cost;
        if (keyId === null) continue;
        (result.byKey[keyId] ??= query.days.map(() => 0))[index] = cost;
      }
    }
    return result;
  }
}
