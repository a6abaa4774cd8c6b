import {
  DAY_MS,
  HEALTH_CELL_MS,
  type CellRow,
  type HealthQuery,
  type HealthReads,
  type HistoryRow,
  type SketchRow,
} from './health-reads.js';
import type { RequestApi } from '../schemas/request-log.js';
import type { AnalyticsSql, Dialect } from './sql.js';

/**
 * Health narrowed to one target or one API (GET /analytics/health?target=provider/model, api=…):
 * the figures health.ts makes from the dashboard's cells, made from the rows that target served
 * or that came in on that API instead, since a cell sums every target's and every API's rows and
 * carries neither `served_by` nor `api`. Each read gives what the cells would give if they were
 * kept by target and API too: counts by model and five-minute cell over the window's whole cells,
 * each model's sketches over the same, and its last success and last traffic (day cells before
 * the end's day, five-minute cells on it), so health.ts lists and adds them up exactly as it does
 * the cells'.
 *
 * The rows are read through the organisation's index by time: the window, then the listing
 * window (a model is listed for traffic since `listedSince`, which a day cell starting a day
 * before can hold), and only for a listed model that did not succeed since, its last success
 * before, newest first, one row.
 */

/** Which rows count: a target's, an API's, or those of both. */
export interface RowsNarrowing {
  servedBy?: string;
  api?: RequestApi;
}

/** The 4xx the gateway refused before dispatch, and the errors: 5xx and upstream 429s (board-cells.ts). */
const UPSTREAM_429 = 'status = 429 AND upstream_error IS NOT NULL';
const rowsWhere = (condition: string) => `SUM(CASE WHEN ${condition} THEN 1 ELSE 0 END)`;

/** The reads for the narrowing's rows: each text depends only on which of its parts are given. */
function readsOf(dialect: Dialect, narrowing: RowsNarrowing) {
  const rows = [
    dialect.rowIs('org_id', 'orgId'),
    ...(narrowing.servedBy === undefined ? [] : ['served_by = @servedBy']),
    ...(narrowing.api === undefined ? [] : ['api = @api']),
  ].join(' AND ');
  return {
    cells: `SELECT model, ts - ts % ${HEALTH_CELL_MS} AS bucket, COUNT(*) AS requests,
        ${rowsWhere('status >= 400 AND status < 500 AND upstream_error IS NULL')} AS refused,
        ${rowsWhere(`status >= 500 OR (${UPSTREAM_429})`)} AS errors,
        ${rowsWhere(UPSTREAM_429)} AS "upstream429"
      FROM requests WHERE ${rows} AND ts >= @from AND ts < @end
      GROUP BY model, ts - ts % ${HEALTH_CELL_MS}`,
    sketches: `SELECT model, sketch_of(total_ms) AS latency, sketch_of(ttft_ms) AS ttft
      FROM requests WHERE ${rows} AND ts >= @from AND ts < @end GROUP BY model`,
    /** `seen` as the cells say it: the day cell's start before the end's day, the five-minute cell's on it. */
    history: `SELECT model, MAX(CASE WHEN status < 400 THEN ts END) AS "lastOk",
        MAX(CASE WHEN ts < @day THEN ts - ts % ${DAY_MS} ELSE ts - ts % ${HEALTH_CELL_MS} END) AS seen
      FROM requests WHERE ${rows} AND ts >= @since AND ts < @end GROUP BY model`,
    earlierSuccess: `SELECT ts FROM requests
      WHERE ${rows} AND ${dialect.rowIs('model', 'model')} AND status < 400 AND ts < @since
      ORDER BY ts DESC LIMIT 1`,
  };
}

export async function fromNarrowedRows(
  sql: AnalyticsSql,
  query: HealthQuery,
  narrowing: RowsNarrowing,
): Promise<HealthReads> {
  const reads = readsOf(sql.dialect, narrowing);
  const window = {
    orgId: query.orgId,
    ...(narrowing.servedBy === undefined ? {} : { servedBy: narrowing.servedBy }),
    ...(narrowing.api === undefined ? {} : { api: narrowing.api }),
    from: query.from,
    // The end of the cell holding `to`: the cells are read whole.
    end: query.from + query.cells * HEALTH_CELL_MS,
  };
  // Rows before this can be in no day cell that lists its model (health.ts: seen + a day > listedSince).
  const since = query.listedSince - DAY_MS;
  const history = await sql.all<HistoryRow>(reads.history, {
    ...window,
    since,
    day: query.to - (query.to % DAY_MS),
  });
  for (const row of history) {
    if (row.lastOk !== null) continue;
    const earlier = await sql.get<{ ts: number }>(reads.earlierSuccess, { ...window, model: row.model, since });
    row.lastOk = earlier?.ts ?? null;
  }
  return {
    cells: await sql.all<CellRow>(reads.cells, window),
    sketches: await sql.all<SketchRow>(reads.sketches, window),
    history,
  };
}
