import type { Scope } from './query-types.js';
import type {
  CellDifference,
  KeyCost,
  PendingSpend,
  ReconcileDayQuery,
  ReconcileDayResult,
  ReconcileSpendQuery,
  ReconcileSpendResult,
  Sums,
} from './reconcile-types.js';
import { GRAINS, THINNED_TABLES } from '../stores/telemetry/rollup-grains.js';
import { rollupSource } from './rollup-sql.js';
import type { AnalyticsSql } from './sql.js';

/**
 * The telemetry store's side of a reconciliation (reconcile.ts puts it beside the control
 * store's): per UTC day, the totals the console reads (organisation, projects, keys, from the
 * rollups as the analytics read them) and every rollup table's cells of that day against the
 * rows they summarise; per key, the lifetime cost of its rows and the spend still in the outbox.
 * A day costs one grouped pass over its rows (requests_by_org, org_id and ts) and a read of its
 * cells: the work is bounded by the day's traffic, never by the whole log. Cells are compared one
 * by one (minute cells by five minutes), so a row counted in the wrong hour of its day is found.
 */

export const DAY_MS = 86_400_000;

/** Most differences one day reports; a store broken everywhere is said by the count. */
export const MAX_DIFFERENCES = 200;

type Measure = 'requests' | 'tokens' | 'cost_micro';

interface RollupTable {
  name: string;
  /** Its cells by project, key and model, or by one dimension (dim, value). */
  shape: 'full' | 'dim';
  /** The width of its cells. */
  grain: number;
  /** The width its cells are compared at: their own, but five minutes for minute cells (see FIVE_MINUTES). */
  width: number;
  measures: Measure[];
}

/**
 * The rows are grouped by five minutes: the finest grain but one, so a row counted in the wrong
 * cell (an hour off, a zone's offset) shows there and not only when it leaves its day. Minute
 * cells are compared summed by five minutes, which keeps the day's groups as few as its
 * five-minute cells.
 */
const FIVE_MINUTES = 300_000;

const USAGE: Measure[] = ['requests', 'tokens', 'cost_micro'];

/** Every rollup table that counts requests, from the store's grains, so a new grain is checked too. */
const TABLES: RollupTable[] = GRAINS.flatMap((grain) => {
  const width = Math.max(grain.ms, FIVE_MINUTES);
  const at = (name: string | null, shape: RollupTable['shape'], measures: Measure[]) =>
    name === null ? [] : [{ name, shape, grain: grain.ms, width, measures }];
  return [
    ...at(grain.usage, 'full', USAGE),
    ...at(grain.outcome, 'full', ['requests']),
    ...at(grain.dims, 'dim', USAGE),
    // The dashboard's cells hold requests and cost, not total tokens (tokens by kind instead).
    ...at(grain.board, 'dim', ['requests', 'cost_micro']),
  ];
});

const measureSql = (table: RollupTable, measure: Measure) =>
  table.measures.includes(measure) ? `SUM(${measure})` : 'NULL';

const sumsOf = (row: { n: number; t: number | null; c: number | null }): Sums => [row.n, row.t, row.c];

const same = (a: Sums, b: Sums) => a.every((value, i) => value === null || b[i] === null || value === b[i]);

const blank = (value: string) => (value === '' ? null : value);

/** The day's totals, read through rollupSource as the console's summaries and top lists read them. */
async function dayTotals(sql: AnalyticsSql, query: ReconcileDayQuery) {
  const scope: Scope = { orgId: query.orgId, from: query.day, to: query.day + DAY_MS - 1 };
  if (query.horizon !== undefined) scope.horizon = query.horizon;
  if (query.fineFrom !== undefined) scope.fineFrom = query.fineFrom;
  const read = (groupBy: 'project' | 'key' | null, within: Scope) => {
    const source = rollupSource(sql.dialect, within, { groupBy });
    return sql.all<{ id: string | null; n: number; t: number; c: number }>(
      `SELECT ${groupBy ? 'grp' : 'NULL'} AS id, COALESCE(SUM(requests), 0) AS n, COALESCE(SUM(tokens), 0) AS t,
        COALESCE(SUM(cost_micro), 0) AS c FROM (${source.sql}) AS source
        ${groupBy ? 'GROUP BY grp ORDER BY grp NULLS FIRST' : ''}`,
      source.params,
    );
  };
  const total = (rows: { id: string | null; n: number; t: number; c: number }[]) =>
    rows.filter((row) => row.n > 0 || row.c !== 0).map((row) => ({ id: row.id, sums: sumsOf(row) }));
  const inScope = query.projectId === undefined ? scope : { ...scope, projectId: query.projectId };
  const keyProjects = await sql.all<{ project_id: string; key_id: string; n: number; t: number; c: number }>(
    `SELECT project_id, key_id, SUM(requests) AS n, SUM(tokens) AS t, SUM(cost_micro) AS c FROM rollup_day
      WHERE org_id = @orgId AND bucket = @day GROUP BY project_id, key_id ORDER BY project_id, key_id`,
    { orgId: query.orgId, day: query.day },
  );
  return {
    organization: query.projectId === undefined ? sumsOf((await read(null, scope))[0]!) : null,
    projects: total(await read('project', inScope)),
    keys: total(await read('key', scope)),
    keyProjects: keyProjects.map((row) => ({
      projectId: blank(row.project_id),
      keyId: blank(row.key_id),
      sums: sumsOf(row),
    })),
  };
}

/** Cells by their key: the bucket, then (project, key, model) or (dim, value). */
interface Cell {
  bucket: number;
  parts: string[];
  sums: Sums;
}
type Cells = Map<string, Cell>;
// Ids and models hold no NUL, so joined with it the parts of two cells never read alike.
const cellKey = (bucket: number, parts: string[]) => `${bucket}\0${parts.join('\0')}`;

function add(into: Cells, bucket: number, parts: string[], sums: Sums) {
  const key = cellKey(bucket, parts);
  const found = into.get(key);
  if (!found) into.set(key, { bucket, parts, sums: [...sums] });
  else {
    const total = found.sums;
    total[0] += sums[0];
    total[1] = (total[1] ?? 0) + (sums[1] ?? 0);
    total[2] = (total[2] ?? 0) + (sums[2] ?? 0);
  }
}

/**
 * The full cells by five minutes (the finest full grain), which stand for the rows retention
 * deleted; by the hour on a day whose fine cells are gone too (fine-cells.ts).
 */
const FIVE_MINUTE_CELLS = GRAINS.find((grain) => grain.ms === FIVE_MINUTES)!.usage!;
const HOUR_CELLS = GRAINS.find((grain) => grain.ms === 3_600_000)!.usage!;

/** Whether the day's fine usage cells are kept: else those tables are left out of the check. */
const keepsFineCells = (query: ReconcileDayQuery) => query.fineFrom === undefined || query.day >= query.fineFrom;

/**
 * The day's rows by five minutes, project, key and model, in one pass over the (org_id, ts)
 * index; before retention's horizon, the five-minute cells instead, so that every other table is
 * checked against them there (cells against cells: the rows are gone).
 */
async function rowSums(sql: AnalyticsSql, query: ReconcileDayQuery): Promise<Cells> {
  const end = query.day + DAY_MS;
  const kept = Math.min(Math.max(query.day, query.horizon ?? query.day), end);
  const project = query.projectId === undefined ? '' : 'AND project_id = @projectId';
  const rowProject = query.projectId === undefined ? '' : `AND ${sql.dialect.rowIs('project_id', 'projectId')}`;
  type Sum = { b: number; p: string; k: string; m: string; n: number; t: number; c: number };
  const rows = await sql.all<Sum>(
    `SELECT ts - ts % ${FIVE_MINUTES} AS b, COALESCE(project_id, '') AS p, COALESCE(key_id, '') AS k, model AS m,
      COUNT(*) AS n, SUM(total_tokens) AS t, SUM(cost_micro) AS c
    FROM requests WHERE ${sql.dialect.rowIs('org_id', 'orgId')} AND ts >= @from AND ts < @to ${rowProject}
    GROUP BY b, p, k, m ORDER BY b, p, k, m`,
    { ...query, from: kept, to: end },
  );
  const gone =
    kept === query.day
      ? []
      : await sql.all<Sum>(
          `SELECT bucket AS b, project_id AS p, key_id AS k, model AS m, requests AS n, tokens AS t, cost_micro AS c
          FROM ${keepsFineCells(query) ? FIVE_MINUTE_CELLS : HOUR_CELLS} WHERE org_id = @orgId AND bucket >= @from AND bucket < @to ${project}`,
          { ...query, from: query.day, to: kept },
        );
  const cells: Cells = new Map();
  for (const row of [...gone, ...rows]) add(cells, row.b, [row.p, row.k, row.m], sumsOf(row));
  return cells;
}

/**
 * The rows' sums as a table of `table`'s shape holds them at its width: by (project, key, model),
 * or by one dimension keyed as rollup_dim_<grain> is, (dim, value); in a project's scope only the
 * project's own cell of each dimension is its alone.
 */
function rowsAs(rows: Cells, table: RollupTable, projectOnly: boolean): Cells {
  const cells: Cells = new Map();
  for (const { bucket, parts, sums } of rows.values()) {
    const at = bucket - (bucket % table.width);
    if (table.shape === 'full') {
      add(cells, at, parts, sums);
      continue;
    }
    const [project, key, model] = parts as [string, string, string];
    const values: [number, string][] = projectOnly
      ? [[1, project]]
      : [
          [0, ''],
          [1, project],
          [2, key],
          [3, model],
        ];
    for (const [dim, value] of values) add(cells, at, [String(dim), value], sums);
  }
  return cells;
}

/** `table`'s cells of the day, summed at its width (and over outcomes for the outcome tables). */
async function cellsOf(sql: AnalyticsSql, table: RollupTable, query: ReconcileDayQuery): Promise<Cells> {
  // Grouped in the primary key's order (no sort) unless minute cells are summed by five minutes.
  const bucket = table.width === table.grain ? 'bucket' : `bucket - bucket % ${table.width}`;
  const measures = `SUM(requests) AS n, ${measureSql(table, 'tokens')} AS t, ${measureSql(table, 'cost_micro')} AS c`;
  const within = 'org_id = @orgId AND bucket >= @from AND bucket < @to';
  const params = { orgId: query.orgId, from: query.day, to: query.day + DAY_MS, projectId: query.projectId };
  const cells: Cells = new Map();
  if (table.shape === 'full') {
    const rows = await sql.all<{
      b: number;
      p: string;
      k: string;
      m: string;
      n: number;
      t: number | null;
      c: number | null;
    }>(
      `SELECT ${bucket} AS b, project_id AS p, key_id AS k, model AS m, ${measures} FROM ${table.name}
      WHERE ${within} ${query.projectId === undefined ? '' : 'AND project_id = @projectId'}
      GROUP BY ${bucket}, project_id, key_id, model ORDER BY b, p, k, m`,
      params,
    );
    for (const row of rows) add(cells, row.b, [row.p, row.k, row.m], sumsOf(row));
    return cells;
  }
  const dims = query.projectId === undefined ? 'dim IN (0, 1, 2, 3)' : 'dim = 1 AND value = @projectId';
  const rows = await sql.all<{ b: number; d: number; v: string; n: number; t: number | null; c: number | null }>(
    `SELECT ${bucket} AS b, dim AS d, value AS v, ${measures} FROM ${table.name}
    WHERE ${within} AND ${dims} GROUP BY dim, ${bucket}, value ORDER BY d, b, v`,
    params,
  );
  for (const row of rows) add(cells, row.b, [String(row.d), row.v], sumsOf(row));
  return cells;
}

/** The cells of `table` that do not hold what their rows add up to; returns how many were compared. */
function compare(table: RollupTable, rows: Cells, cells: Cells, differences: CellDifference[]): number {
  const zero: Sums = [0, 0, 0];
  const mask = (sums: Sums): Sums => [
    sums[0],
    table.measures.includes('tokens') ? sums[1] : null,
    table.measures.includes('cost_micro') ? sums[2] : null,
  ];
  let checked = 0;
  const check = (row: Cell | undefined, cell: Cell | undefined) => {
    checked++;
    const fromRows = mask(row?.sums ?? zero);
    const fromCells = mask(cell?.sums ?? zero);
    if (same(fromRows, fromCells)) return;
    const { bucket, parts } = (row ?? cell)!;
    const where =
      table.shape === 'full'
        ? { projectId: blank(parts[0]!), keyId: blank(parts[1]!), model: parts[2]! }
        : {
            projectId: parts[0] === '1' ? blank(parts[1]!) : null,
            keyId: parts[0] === '2' ? blank(parts[1]!) : null,
            model: parts[0] === '3' ? parts[1]! : null,
          };
    differences.push({
      table: table.name,
      bucket: table.width < DAY_MS ? bucket : null,
      width: table.width,
      ...where,
      rows: fromRows,
      cells: fromCells,
    });
  };
  for (const [key, row] of rows) check(row, cells.get(key));
  for (const [key, cell] of cells) if (!rows.has(key)) check(undefined, cell);
  return checked;
}

/** Every rollup table's cells of one day against the day's rows, cell by cell. */
async function cellsAgainstRows(sql: AnalyticsSql, query: ReconcileDayQuery) {
  const rows = await rowSums(sql, query);
  const projectOnly = query.projectId !== undefined;
  const differences: CellDifference[] = [];
  // Tables of the same shape and width (a grain's usage and outcome cells) share the rows' sums.
  const asTables = new Map<string, Cells>();
  let checked = 0;
  for (const table of TABLES) {
    if (THINNED_TABLES.includes(table.name) && !keepsFineCells(query)) continue;
    const shape = `${table.shape} ${table.width}`;
    if (!asTables.has(shape)) asTables.set(shape, rowsAs(rows, table, projectOnly));
    checked += compare(table, asTables.get(shape)!, await cellsOf(sql, table, query), differences);
  }
  return { cellsChecked: checked, differences: differences.slice(0, MAX_DIFFERENCES), total: differences.length };
}

/** One day of the check, read in one read transaction by the caller so every figure sees the same rows. */
export async function reconcileDay(sql: AnalyticsSql, query: ReconcileDayQuery): Promise<ReconcileDayResult> {
  const totals = await dayTotals(sql, query);
  const cells = await cellsAgainstRows(sql, query);
  return {
    day: query.day,
    ...totals,
    cellsChecked: cells.cellsChecked,
    differences: cells.differences,
    differenceCount: cells.total,
  };
}

/** Lifetime cost by key and the outbox, read in one read transaction by the caller. */
export async function reconcileSpend(sql: AnalyticsSql, query: ReconcileSpendQuery): Promise<ReconcileSpendResult> {
  const keys = query.keyIds === null ? null : JSON.stringify(query.keyIds);
  const costs = await sql.all<KeyCost>(
    `SELECT value AS "keyId", SUM(cost_micro) AS "costMicro" FROM rollup_dim_day
      WHERE org_id = @orgId AND dim = 2 AND value <> '' ${keys === null ? '' : `AND value IN (${sql.dialect.valuesOf('keys')})`}
      GROUP BY value ORDER BY value`,
    keys === null ? { orgId: query.orgId } : { orgId: query.orgId, keys },
  );
  // The outbox holds keys, not organisations: read it whole (it is empty but for commits in progress).
  const outbox = await sql.all<PendingSpend>(
    'SELECT settlement, key_id AS "keyId", micro FROM spend_outbox ORDER BY settlement, key_id',
  );
  return { costs, outbox };
}
