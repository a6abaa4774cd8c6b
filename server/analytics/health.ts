import { keptAccumulators, type SketchAccumulator } from '../stores/telemetry/latency-sketch.js';
import { BOARD_GRAINS } from '../stores/telemetry/rollup-grains.js';
import type { AnalyticsSql } from './sql.js';
import {
  DAY_MS,
  HEALTH_CELL_MS,
  type CellRow,
  type HealthQuery,
  type HealthReads,
  type HistoryRow,
  type SketchRow,
} from './health-reads.js';
import { fromNarrowedRows } from './health-rows.js';
import { segments } from './windows.js';

/**
 * Provider and model health (GET /analytics/health) from the dashboard's cells by model
 * (migrations/008_dashboard_rollups.sql, 010_health_rollups.sql): the window is whole
 * five-minute cells, the newest one still filling, so every figure is the cells' own and no
 * request row is read. The strip's counts are the five-minute cells' (a day is 288 per model);
 * the percentiles merge the sketches of hour cells in the window's middle and five-minute ones
 * at its edges, which at a day is a tenth of the sketches to read. The last success comes from
 * the day cells, so a model silent for days still says when it last answered.
 *
 * A model's figures are its own cells only; a provider's are the cells of the models the
 * catalogue gives it, summed (its sketches merged), so one model's errors never colour
 * another model, nor another provider.
 *
 * Narrowed to a target (`servedBy`) or an API (`api`), the same figures come from those rows
 * instead (health-rows.ts), since no cell carries `served_by` or `api`.
 */

const MODEL_DIM = 3;
const P95 = [0.95];

/** Counts over the window, or per cell in parallel arrays. */
export interface HealthCounts<T> {
  requests: T;
  /** Refused by the gateway before dispatch (the dashboard's `refused`). */
  refused: T;
  /** 5xx and upstream 429s. */
  errors: T;
  upstream429: T;
}

export interface HealthFigures {
  totals: HealthCounts<number>;
  cells: HealthCounts<number[]>;
  p95LatencyMs: number | null;
  p95TtftMs: number | null;
  lastOk: number | null;
}

export interface ModelHealthFigures extends HealthFigures {
  model: string;
}

export interface ProviderHealthFigures extends HealthFigures {
  provider: string | null;
  models: ModelHealthFigures[];
}

const CELLS_SQL = `SELECT value AS model, bucket, requests, refused, server_errors + upstream_429 AS errors,
    upstream_429 AS "upstream429"
  FROM rollup_board_5m
  WHERE org_id = @orgId AND dim = ${MODEL_DIM} AND bucket >= @from AND bucket <= @to`;

/** Hours and five minutes: the window is whole five-minute cells, so no row is left at its edges. */
const SKETCH_GRAINS = BOARD_GRAINS.filter((grain) => grain.ms <= 3_600_000);

/** The sketches of the window's cells, coarsest that fit, by model. */
function sketchSql(from: number, to: number): { sql: string; params: Record<string, number> } {
  const params: Record<string, number> = {};
  const parts = segments(from, to, SKETCH_GRAINS).map((part, index) => {
    params[`from${index}`] = part.from;
    params[`to${index}`] = part.to;
    return `SELECT value AS model, latency, ttft FROM ${part.grain!.board}
      WHERE org_id = @orgId AND dim = ${MODEL_DIM} AND bucket >= @from${index} AND bucket < @to${index}`;
  });
  return { sql: parts.join('\nUNION ALL\n'), params };
}

/**
 * Each model's last success and last traffic up to the window's end: day cells before the end's
 * day, then that day's five-minute cells up to the window's last, so a window in the past never
 * shows a success from after it.
 */
const LAST_SQL = `SELECT model, MAX(last_ok) AS "lastOk", MAX(seen) AS seen FROM (
    SELECT value AS model, last_ok, bucket AS seen FROM rollup_board_day
      WHERE org_id = @orgId AND dim = ${MODEL_DIM} AND bucket < @day
    UNION ALL
    SELECT value AS model, last_ok, bucket AS seen FROM rollup_board_5m
      WHERE org_id = @orgId AND dim = ${MODEL_DIM} AND bucket >= @day AND bucket <= @to) AS cells
  GROUP BY model`;

const COUNTS = ['requests', 'refused', 'errors', 'upstream429'] as const;

function emptyFigures(cells: number, lastOk: number | null): HealthFigures {
  const zeros = () => Array.from({ length: cells }, () => 0);
  return {
    totals: { requests: 0, refused: 0, errors: 0, upstream429: 0 },
    cells: { requests: zeros(), refused: zeros(), errors: zeros(), upstream429: zeros() },
    p95LatencyMs: null,
    p95TtftMs: null,
    lastOk,
  };
}

/** Adds a model's cells to `figures`. */
function addCells(figures: HealthFigures, rows: readonly CellRow[], from: number): void {
  for (const row of rows) {
    const index = (row.bucket - from) / HEALTH_CELL_MS;
    for (const count of COUNTS) {
      figures.totals[count] += row[count];
      figures.cells[count][index]! += row[count];
    }
  }
}

function addSketches(rows: readonly SketchRow[], latency: SketchAccumulator, ttft: SketchAccumulator): void {
  for (const row of rows) {
    if (row.latency) latency.addEncoded(row.latency);
    if (row.ttft) ttft.addEncoded(row.ttft);
  }
}

function byModelOf<T extends { model: string }>(rows: readonly T[]): Map<string, T[]> {
  const byModel = new Map<string, T[]>();
  for (const row of rows) {
    const list = byModel.get(row.model);
    if (list) list.push(row);
    else byModel.set(row.model, [row]);
  }
  return byModel;
}

function takeP95(figures: HealthFigures, latency: SketchAccumulator, ttft: SketchAccumulator): void {
  figures.p95LatencyMs = latency.quantiles(P95)?.[0] ?? null;
  figures.p95TtftMs = ttft.quantiles(P95)?.[0] ?? null;
  latency.reset();
  ttft.reset();
}

const later = (a: number | null, b: number | null) => (a === null ? b : b === null ? a : Math.max(a, b));

async function fromCells(sql: AnalyticsSql, query: HealthQuery): Promise<HealthReads> {
  const params = { orgId: query.orgId, from: query.from, to: query.to };
  const sketches = sketchSql(query.from, query.from + query.cells * HEALTH_CELL_MS);
  return {
    cells: await sql.all<CellRow>(CELLS_SQL, params),
    sketches: await sql.all<SketchRow>(sketches.sql, { orgId: query.orgId, ...sketches.params }),
    history: await sql.all<HistoryRow>(LAST_SQL, { ...params, day: query.to - (query.to % DAY_MS) }),
  };
}

export async function providerHealth(sql: AnalyticsSql, query: HealthQuery): Promise<ProviderHealthFigures[]> {
  const narrowed = query.servedBy !== undefined || query.api !== undefined;
  const { cells, sketches, history } = narrowed
    ? await fromNarrowedRows(sql, query, { servedBy: query.servedBy, api: query.api })
    : await fromCells(sql, query);
  const sketchesOf = byModelOf(sketches);
  const byModel = byModelOf(cells);
  const lastOk = new Map<string, number | null>();
  for (const row of history) {
    lastOk.set(row.model, row.lastOk);
    // A day cell holds the instant `listedSince` when it starts up to a day before it.
    if (row.seen + DAY_MS > query.listedSince && !byModel.has(row.model)) byModel.set(row.model, []);
  }

  const byProvider = new Map<string | null, string[]>();
  for (const model of [...byModel.keys()].sort()) {
    const provider = Object.hasOwn(query.providers, model) ? query.providers[model]! : null;
    const list = byProvider.get(provider);
    if (list) list.push(model);
    else byProvider.set(provider, [model]);
  }

  const [latency, ttft, providerLatency, providerTtft] = keptAccumulators();
  const providers: ProviderHealthFigures[] = [];
  for (const [provider, models] of byProvider) {
    const figures: ProviderHealthFigures = { ...emptyFigures(query.cells, null), provider, models: [] };
    for (const model of models) {
      const own: ModelHealthFigures = { ...emptyFigures(query.cells, lastOk.get(model) ?? null), model };
      addCells(own, byModel.get(model)!, query.from);
      addSketches(sketchesOf.get(model) ?? [], latency, ttft);
      // The provider's percentiles are over all its models' requests.
      providerLatency.addAll(latency);
      providerTtft.addAll(ttft);
      takeP95(own, latency, ttft);
      figures.models.push(own);
      figures.lastOk = later(figures.lastOk, own.lastOk);
    }
    for (const model of models) addCells(figures, byModel.get(model)!, query.from);
    takeP95(figures, providerLatency, providerTtft);
    providers.push(figures);
  }
  // Named providers by name, then the models the catalogue does not know.
  return providers.sort((a, b) =>
    a.provider === null ? 1 : b.provider === null ? -1 : a.provider.localeCompare(b.provider),
  );
}
