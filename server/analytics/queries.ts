import type { Database, Statement } from 'better-sqlite3';
import type { RequestRecord } from '../stores/telemetry/request-record.js';
import { registerTelemetryFunctions } from '../stores/telemetry/sql-functions.js';
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
import { reconcileDay, reconcileSpend } from './reconcile-telemetry.js';
import { MODELS_CLAUSE, countableFromRollups, rollupSource } from './rollup-sql.js';
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

/**
 * Each metric's value from sums and counts over rollup cells and raw rows (rollup-sql.ts):
 * `sum` wraps a column in SUM() where rows are grouped, or gives it as is for a row that
 * is already the whole point.
 */
const METRIC_SQL: Record<Metric, (sum: (column: string) => string) => string> = {
  volume: (sum) => sum('requests'),
  latency: (sum) => `${sum('total_ms')} / ${sum('requests')}`,
  // x / 0 is null in SQLite: a bucket with no first-token time has no mean.
  ttft: (sum) => `${sum('ttft_ms')} / ${sum('ttft_count')}`,
  tok_s: (sum) => `${sum('speed_tokens')} * 1000.0 / ${sum('speed_ms')}`,
  token_usage: (sum) => sum('tokens'),
};

/** The largest finite double: values beyond it are infinite. */
const DOUBLE_MAX = '1.7976931348623157e308';

/**
 * `value` casefolded as JavaScript does it. SQLite's lower() folds ASCII only, which is all
 * an ASCII string needs, at a third of the cost of calling into JavaScript.
 */
const folded = (value: string) =>
  `CASE WHEN length(${value}) = octet_length(${value}) THEN lower(${value}) ELSE casefold(${value}) END`;

/** Whether a row's metadata, key or value, holds the search text. */
const IN_METADATA = `EXISTS (SELECT 1 FROM json_each(requests.metadata) m
  WHERE instr(${folded('m.key')}, @search) > 0 OR instr(${folded('m.value')}, @search) > 0)`;

const IN_REQ_ID = `instr(${folded('req_id')}, @search) > 0`;

/** The search read from the rows, when the index cannot answer it (search-index.ts). */
const SEARCH_SQL = `(${IN_REQ_ID} OR ${IN_METADATA})`;

/**
 * The same, first looking for the text in the metadata's JSON as it is stored, which costs a
 * fraction of taking it apart. Keys and values are strings; a JSON writer (this one, or another
 * program writing the request log) keeps every character as it is but for `"`, `\`, `/` and
 * control characters, which it may write as two-character escapes, and any character at all,
 * which it may write as `\uXXXX`. So in a row whose JSON has no `\u`, a text of ASCII letters,
 * digits and other punctuation (SAFE_TEXT; not non-ASCII, whose folding can depend on the
 * neighbouring characters) is in a key or value only if it is in the stored JSON.
 */
const SAFE_SEARCH_SQL = `(${IN_REQ_ID}
  OR ((instr(requests.metadata, '\\u') > 0 OR instr(${folded('requests.metadata')}, @search) > 0)
    AND ${IN_METADATA}))`;

const SAFE_TEXT = /^[\w .,:;@#+=!?*()[\]{}|~^$%<>&'-]*$/;

function where(filter: RequestFilter): string {
  const clauses = ['org_id = @orgId', 'ts >= @from', 'ts <= @to'];
  if (filter.projectId !== undefined) clauses.push('project_id = @projectId');
  if (filter.keyId !== undefined) clauses.push('key_id = @keyId');
  if (filter.model !== undefined) clauses.push('model = @model');
  if (filter.models !== undefined) clauses.push(MODELS_CLAUSE);
  if (filter.statusClass !== undefined) clauses.push('status >= @statusFrom AND status < @statusTo');
  if (filter.terminationReason !== undefined) clauses.push('termination_reason = @terminationReason');
  if (filter.minCostMicro !== undefined) clauses.push('cost_micro >= @minCostMicro');
  if (filter.search !== undefined) clauses.push(SAFE_TEXT.test(filter.search) ? SAFE_SEARCH_SQL : SEARCH_SQL);
  return clauses.join(' AND ');
}

function bindings(filter: RequestFilter): Record<string, unknown> {
  const { statusClass, ...rest } = filter;
  return statusClass === undefined
    ? rest
    : { ...rest, statusFrom: statusClass * 100, statusTo: statusClass * 100 + 100 };
}

/** Runs analytics queries on one connection, preparing each distinct statement once. */
export class AnalyticsQueries {
  private readonly statements = new Map<string, Statement>();
  private readonly search = new SearchIndex((sql) => this.statement(sql));

  constructor(private readonly db: Database) {
    registerTelemetryFunctions(db);
  }

  run<Q extends AnalyticsQuery>(query: Q): AnalyticsResult<Q> {
    switch (query.kind) {
      case 'summary':
        return this.summary(query.scope) as AnalyticsResult<Q>;
      case 'timeseries':
        return this.timeseries(query) as AnalyticsResult<Q>;
      case 'requests':
        // One read transaction: the total, the index's matches and the page see the same rows
        // even when the writer commits between their statements.
        return this.db.transaction(() =>
          this.requests(query.filter, query.limit, query.offset),
        )() as AnalyticsResult<Q>;
      case 'throttling':
        return this.throttling(query) as AnalyticsResult<Q>;
      case 'compare': {
        const { scope, previous } = query;
        return this.db.transaction(() => ({
          current: this.summary(scope),
          previous: this.summary({ ...scope, ...previous }),
        }))() as AnalyticsResult<Q>;
      }
      case 'top':
        return this.db.transaction(() => this.top(query))() as AnalyticsResult<Q>;
      case 'dashboard': {
        const { scope, edges, previous } = query;
        const statement = (sql: string) => this.statement(sql);
        // A window is a bucket of its own: its percentiles are over all its requests.
        const whole = (window: Scope) => dashboardBuckets(statement, window, [window.from, window.to + 1])[0]!;
        return this.db.transaction(() => ({
          points: dashboardBuckets(statement, scope, edges),
          current: whole(scope),
          previous: whole({ ...scope, ...previous }),
          cache: cacheByModel(statement, scope),
        }))() as AnalyticsResult<Q>;
      }
      case 'impact':
        // One read transaction: the counts, the last use and the callers see the same rows.
        return this.db.transaction(() => keyImpact((sql) => this.statement(sql), query))() as AnalyticsResult<Q>;
      case 'request':
        return (this.statement('SELECT * FROM requests WHERE req_id = @reqId AND org_id = @orgId').get({
          reqId: query.reqId,
          orgId: query.orgId,
        }) ?? null) as AnalyticsResult<Q>;
      case 'reconcile_day':
        // One read transaction: the totals, the cells and the rows are the same moment's.
        return this.db.transaction(() => reconcileDay((sql) => this.statement(sql), query))() as AnalyticsResult<Q>;
      case 'reconcile_spend':
        return this.db.transaction(() => reconcileSpend((sql) => this.statement(sql), query))() as AnalyticsResult<Q>;
      case 'health':
        // One read transaction: the window's cells and the last successes are the same moment's.
        return this.db.transaction(() => providerHealth((sql) => this.statement(sql), query))() as AnalyticsResult<Q>;
      case 'burn':
        // One read transaction: every day sees the same rows.
        return this.db.transaction(() => this.burn(query))() as AnalyticsResult<Q>;
    }
    throw new Error('unknown analytics query');
  }

  private summary(scope: Scope): SummaryResult {
    const source = rollupSource(scope);
    const row = this.statement(
      `SELECT COALESCE(SUM(requests), 0) AS requests, SUM(total_ms) / SUM(requests) AS avgTotalMs,
        SUM(ttft_ms) / SUM(ttft_count) AS avgTtftMs, SUM(speed_tokens) AS speedTokens, SUM(speed_ms) AS speedMs,
        COALESCE(SUM(tokens), 0) AS totalTokens, COALESCE(SUM(cost_micro), 0) AS costMicro
      FROM (${source.sql})`,
    ).get(source.params) as SummaryResult & {
      speedTokens: number | null;
      speedMs: number | null;
    };
    const { speedTokens, speedMs, ...summary } = row;
    const speed = !speedTokens || !speedMs ? null : (speedTokens * 1000) / speedMs;
    return { ...summary, tokensPerSecond: speed !== null && Number.isFinite(speed) ? speed : null };
  }

  private timeseries(query: Extract<AnalyticsQuery, { kind: 'timeseries' }>): SeriesJson {
    const source = rollupSource(query.scope, { intervalMs: query.intervalMs, groupBy: query.groupBy });
    const metric = METRIC_SQL[query.metric];
    const group = query.groupBy ? 'grp' : 'NULL';
    const grouped = `SELECT bucket, ${group} AS "group", ${metric((c) => `SUM(${c})`)} AS value
      FROM (${source.sql}) GROUP BY bucket, "group"`;
    const points = source.points && `SELECT bucket, ${group}, ${metric((c) => c)} FROM (${source.points})`;
    // The points as JSON from SQLite itself: handing thousands of rows to JavaScript cost
    // more than computing them. Its numbers read back as the same doubles (5.0 for 5). A
    // value that is not finite is as unknown as null; buckets are UTC without an offset
    // (datetime() is a third of strftime()'s cost).
    return this.statement(
      `SELECT COUNT(*) AS points, COALESCE(json_group_array(json_object(
          'bucket', replace(datetime(bucket / 1000, 'unixepoch'), ' ', 'T'), 'group', "group", 'value', value)
        ORDER BY bucket, "group"), '[]') AS json
      FROM (${[grouped, points].filter(Boolean).join('\nUNION ALL\n')})
      WHERE value BETWEEN -${DOUBLE_MAX} AND ${DOUBLE_MAX}`,
    ).get(source.params) as SeriesJson;
  }

  private requests(filter: RequestFilter, limit: number, offset: number): RequestPage {
    if (filter.search !== undefined) {
      // The window's rows counted as the summary counts them: its rollups reach down to
      // minutes, the request log's to hours (up to an hour of rows read at each edge).
      const windowRows = this.summary({ orgId: filter.orgId, from: filter.from, to: filter.to }).requests;
      const match = this.search.match(filter.orgId, filter.search, windowRows);
      if (match) return this.searchPage(filter, match, limit, offset, windowRows);
    }
    const { total } = this.count(filter);
    // Past the last row there is no page to look for (a search that matches nothing would
    // read the whole window a second time).
    if (offset >= total) return { total, rows: [] };
    return { total, rows: this.page(where(filter), bindings(filter), limit, offset) };
  }

  /** A page of rows in log order: their ids first, from an index where the filter allows, then the rows. */
  private page(
    condition: string,
    params: Record<string, unknown>,
    limit: number,
    offset: number,
    source = 'requests',
  ): RequestRecord[] {
    return this.statement(
      `SELECT * FROM requests WHERE rowid IN (
        SELECT rowid FROM ${source} WHERE ${condition}
        ORDER BY ts DESC, req_id DESC LIMIT @limit OFFSET @offset)
      ORDER BY ts DESC, req_id DESC`,
    ).all({ ...params, limit, offset }) as RequestRecord[];
  }

  /** A search answered from its index; `windowRows`: the rows of its window, whatever the other filters. */
  private searchPage(
    searched: RequestFilter,
    match: SearchMatch,
    limit: number,
    offset: number,
    windowRows: number,
  ): RequestPage {
    const { search: _, ...filter } = searched;
    const condition = where(filter);
    const params = { ...bindings(filter), ...matchParams(match) };
    const windowOnly = Object.entries(filter).every(
      ([name, value]) => value === undefined || ['orgId', 'from', 'to'].includes(name),
    );
    let total = 0;
    if (match.metadata !== null) {
      total += windowOnly
        ? this.search.countShared(match, filter.orgId, filter.from, filter.to)
        : this.countWhere(`${condition} AND ${BY_SHARED_TERM}`, params, FROM_MATCHES);
    }
    if (match.firstRows.length > 0) {
      // First rows of terms, less those the shared terms found already.
      const notByMetadata = match.metadata === null ? '' : `AND NOT ${HOLDS_SHARED_TERM}`;
      total += this.countWhere(`${BY_FIRST_ROW} AND ${condition} ${notByMetadata}`, params, FROM_MATCHES);
    }
    if (offset >= total) return { total, rows: [] };
    // Reading rows newest first and checking each costs about (offset + limit) / share of
    // the window's rows; reading the matches from the index and sorting them, about `total`.
    const filtered = windowOnly ? windowRows : this.count(filter).total;
    const share = total / Math.max(total, filtered);
    const rows =
      (offset + limit) / share < total
        ? this.page(where(searched), bindings(searched), limit, offset)
        : this.page(`${condition} AND ${matchSql(match)}`, params, limit, offset, FROM_MATCHES);
    return { total, rows };
  }

  private countWhere(condition: string, params: Record<string, unknown>, source = 'requests'): number {
    return (this.statement(`SELECT COUNT(*) AS n FROM ${source} WHERE ${condition}`).get(params) as { n: number }).n;
  }

  /** The exact number of rows a filter matches: from the rollups when they are keyed by all its parts. */
  private count(filter: RequestFilter): { total: number } {
    if (!countableFromRollups(filter)) return { total: this.countWhere(where(filter), bindings(filter)) };
    const source = rollupSource(filter, { counts: true });
    return this.statement(`SELECT COALESCE(SUM(requests), 0) AS total FROM (${source.sql})`).get(source.params) as {
      total: number;
    };
  }

  private throttling(query: Extract<AnalyticsQuery, { kind: 'throttling' }>): ThrottlingResult {
    const params = { orgId: query.orgId, keys: JSON.stringify(query.keyIds), from: query.from, to: query.to };
    const perKey = (condition: string) =>
      Object.fromEntries(
        (
          this.statement(
            `SELECT key_id, COUNT(*) AS n FROM requests
            WHERE org_id = @orgId AND key_id IN (SELECT value FROM json_each(@keys)) AND ${condition}
            GROUP BY key_id`,
          ).all(params) as { key_id: string; n: number }[]
        ).map((row) => [row.key_id, row.n]),
      );
    return {
      lastMinute: perKey('ts > @to - 60000 AND ts <= @to'),
      throttled: perKey('ts >= @from AND ts <= @to AND status = 429'),
    };
  }

  /** Every group's figures in the window and the one before, from the rollups (rows at the edges). */
  private top(query: Extract<AnalyticsQuery, { kind: 'top' }>): TopRow[] {
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
      const source = rollupSource(window, { groupBy });
      return this.statement(
        `SELECT grp, SUM(requests) AS requests, SUM(total_ms) AS totalMs, SUM(cost_micro) AS costMicro
        FROM (${source.sql}) GROUP BY grp`,
      ).all(source.params) as { grp: string | null; requests: number; totalMs: number; costMicro: number }[];
    };
    for (const u of usage(scope))
      Object.assign(row(u.grp), { requests: u.requests, totalMs: u.totalMs, costMicro: u.costMicro });
    for (const u of usage({ ...scope, ...query.previous })) {
      Object.assign(row(u.grp), { previousRequests: u.requests, previousCostMicro: u.costMicro });
    }
    const failed = rollupSource({ ...scope, statusClass: 5 }, { counts: true, groupBy });
    const errors = this.statement(`SELECT grp, SUM(requests) AS n FROM (${failed.sql}) GROUP BY grp`).all(
      failed.params,
    ) as { grp: string | null; n: number }[];
    for (const e of errors) row(e.grp).errors = e.n;
    const trends = groupTrends((sql) => this.statement(sql), scope, groupBy, query.trendEdges);
    for (const [group, { trend, latency }] of trends) Object.assign(row(group), { trend, latency });
    return [...rows.values()];
  }

  /** Each day's cost by key, from the rollups by key (whole cells inside, rows at the edges). */
  private burn(query: Extract<AnalyticsQuery, { kind: 'burn' }>): BurnResult {
    const result: BurnResult = { byKey: {}, organization: query.days.map(() => 0) };
    query.days.forEach((day, index) => {
      const source = rollupSource({ orgId: query.orgId, from: day.from, to: day.to }, { groupBy: 'key' });
      const rows = this.statement(
        `SELECT grp AS keyId, COALESCE(SUM(cost_micro), 0) AS cost FROM (${source.sql}) GROUP BY grp`,
      ).all(source.params) as { keyId: string | null; cost: number }[];
      for (const { keyId, cost } of rows) {
        result.organization[index]! += cost;
        if (keyId === null) continue;
        (result.byKey[keyId] ??= query.days.map(() => 0))[index] = cost;
      }
    });
    return result;
  }

  private statement(sql: string): Statement {
    let statement = this.statements.get(sql);
    if (!statement) {
      statement = this.db.prepare(sql);
      this.statements.set(sql, statement);
    }
    return statement;
  }
}
