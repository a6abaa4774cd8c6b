import { addDelta, boardDelta, newBoardCell, type BoardCell } from './board-cells.js';
import { GRAINS } from './rollup-grains.js';
import type { RequestRecord } from './request-record.js';

/**
 * The sums the rollup tables (migrations/002_rollups.sql, 004_dimension_rollups.sql,
 * 006_minute_rollups.sql, 008_dashboard_rollups.sql, 009_cache_rollups.sql) gain from rows being imported, kept in memory as plain data so
 * that they can be summed on the import's preparing thread and written on its writing one
 * (rollup-writer.ts). Each row is added to the finest cell of each kind of table only
 * (usage by five minutes, one dimension by the minute, outcomes and the prompt cache by the
 * hour, the dashboard's by five minutes); the writer sums the coarser grains from those cells.
 * A row then costs 11 cell additions instead of 35.
 */

/** Measures of a usage cell, in the tables' column order after the dimensions. */
export type Usage = [
  requests: number,
  totalMs: number,
  ttftCount: number,
  ttftMs: number,
  speedTokens: number,
  speedMs: number,
  tokens: number,
  costMicro: number,
];

/** The finest cells of one table row's dimensions (all but the bucket), by bucket. */
export interface Cells<T extends number[]> {
  /** The dimensions in the tables' key order, the bucket left out (it comes second). */
  dims: (string | number)[];
  byBucket: Map<number, T>;
}

/** The columns of a prompt-cache cell's measures (009_cache_rollups.sql), in order. */
export const CACHE_MEASURES = [
  'prompt_tokens',
  'prompt_rows',
  'cache_read',
  'cache_write',
  'cache_rows',
  'known_read',
  'known_write',
] as const;

/** Measures of a prompt-cache cell, in that order. */
export type CacheMeasures = [
  promptTokens: number,
  promptRows: number,
  cacheRead: number,
  cacheWrite: number,
  cacheRows: number,
  knownRead: number,
  knownWrite: number,
];

/** The dashboard's finest cells of one (organisation, dimension, value). */
export interface BoardCells {
  dims: (string | number)[];
  byBucket: Map<number, BoardCell>;
}

/** Finest cells of each kind of table. */
export interface RollupCells {
  usage: Cells<Usage>[];
  byDim: Cells<Usage>[];
  outcome: Cells<[number]>[];
  cache: Cells<CacheMeasures>[];
  board: BoardCells[];
}

export type Family = Exclude<keyof RollupCells, 'board'>;

const finest = (table: 'usage' | 'dims' | 'outcome' | 'cache' | 'board') =>
  GRAINS.filter((grain) => grain[table] !== null).at(-1)!.ms;

/** The grain of each kind's finest cells. */
export const FINEST_MS: Record<keyof RollupCells, number> = {
  usage: finest('usage'),
  byDim: finest('dims'),
  outcome: finest('outcome'),
  cache: finest('cache'),
  board: finest('board'),
};

/** Finest cells held before they go to the writer: bounds memory on a long import. */
export const MAX_CELLS = 200_000;

/** What one row adds to an outcome cell. */
const ONE_REQUEST: [number] = [1];

class Sums<T extends number[]> implements Cells<T> {
  readonly byBucket = new Map<number, T>();
  // Rows mostly come in time order: the last cell used is usually the next one.
  private lastBucket = NaN;
  private last: T | undefined;

  constructor(readonly dims: (string | number)[]) {}

  /** Adds `delta` to the cell of `bucket`; true when the cell is new. */
  add(bucket: number, delta: T): boolean {
    let cell = bucket === this.lastBucket ? this.last : this.byBucket.get(bucket);
    const made = cell === undefined;
    if (cell === undefined) this.byBucket.set(bucket, (cell = delta.slice() as T));
    else for (let i = 0; i < delta.length; i++) cell[i]! += delta[i]!;
    this.lastBucket = bucket;
    this.last = cell;
    return made;
  }

  /** Plain data for the writer (a class instance would lose its prototype across threads). */
  cells(): Cells<T> {
    return { dims: this.dims, byBucket: this.byBucket };
  }
}

/**
 * The cells one combination of organisation, project, key and model adds to: looked up
 * once per combination instead of once per row.
 */
interface Route {
  id: string;
  dims: (string | number)[];
  usage: Sums<Usage>;
  cache: Sums<CacheMeasures>;
  /** The cells of each `dim` code: the organisation, project, key, model. */
  byDim: Sums<Usage>[];
  /** Per status class, then termination reason. */
  outcomes: Map<number, Map<string, Sums<[number]>>>;
  /** The dashboard's cells of each `dim` code, as byDim. */
  board: Map<number, BoardCell>[];
}

/** By organisation, project, key, then model: lookups of strings whose hashes are kept, no key built per row. */
type Routes = Map<string, Map<string, Map<string, Map<string, Route>>>>;

function within<V>(map: Map<string | number, Map<string, V>>, key: string | number): Map<string, V> {
  let inner = map.get(key);
  if (!inner) map.set(key, (inner = new Map()));
  return inner;
}

export class RollupSums {
  private usage = new Map<string, Sums<Usage>>();
  private cache = new Map<string, Sums<CacheMeasures>>();
  private byDim = new Map<string, Sums<Usage>>();
  private outcome = new Map<string, Sums<[number]>>();
  private board = new Map<string, BoardCells>();
  private routes: Routes = new Map();
  private held = 0;

  add(row: RequestRecord): void {
    const generationMs = row.total_ms - (row.ttft_ms ?? row.pre_dispatch_ms);
    const countsForSpeed = row.tokens_generated > 0 && generationMs > 0;
    const delta: Usage = [
      1,
      row.total_ms,
      row.ttft_ms === null ? 0 : 1,
      row.ttft_ms ?? 0,
      countsForSpeed ? row.tokens_generated : 0,
      countsForSpeed ? generationMs : 0,
      row.total_tokens,
      row.cost_micro,
    ];
    const ts = row.ts;
    const route = this.route(row);
    let made = 0;
    if (route.usage.add(ts - (ts % FINEST_MS.usage), delta)) made++;
    const cacheKnown = row.cache_read_input_tokens !== null || row.cache_creation_input_tokens !== null;
    const promptKnown = row.prompt_tokens !== null;
    const cached: CacheMeasures = [
      row.prompt_tokens ?? 0,
      promptKnown ? 1 : 0,
      row.cache_read_input_tokens ?? 0,
      row.cache_creation_input_tokens ?? 0,
      cacheKnown ? 1 : 0,
      promptKnown ? (row.cache_read_input_tokens ?? 0) : 0,
      promptKnown ? (row.cache_creation_input_tokens ?? 0) : 0,
    ];
    if (route.cache.add(ts - (ts % FINEST_MS.cache), cached)) made++;
    const minute = ts - (ts % FINEST_MS.byDim);
    for (const cells of route.byDim) if (cells.add(minute, delta)) made++;
    if (this.outcomeSums(route, row).add(ts - (ts % FINEST_MS.outcome), ONE_REQUEST)) made++;
    const board = boardDelta(row, delta[4], delta[5]);
    const fiveMinutes = ts - (ts % FINEST_MS.board);
    for (const byBucket of route.board) {
      let cell = byBucket.get(fiveMinutes);
      if (!cell) {
        byBucket.set(fiveMinutes, (cell = newBoardCell()));
        made++;
      }
      made += addDelta(cell, board);
    }
    this.held += made;
  }

  /** Whether enough cells are held that they should go to the writer now. */
  full(): boolean {
    return this.held >= MAX_CELLS;
  }

  /** The cells summed so far, forgotten here; null when there are none. */
  take(): RollupCells | null {
    if (this.held === 0) return null;
    const cells = {
      usage: [...this.usage.values()].map((sums) => sums.cells()),
      cache: [...this.cache.values()].map((sums) => sums.cells()),
      byDim: [...this.byDim.values()].map((sums) => sums.cells()),
      outcome: [...this.outcome.values()].map((sums) => sums.cells()),
      board: [...this.board.values()],
    };
    this.usage = new Map();
    this.cache = new Map();
    this.board = new Map();
    this.byDim = new Map();
    this.outcome = new Map();
    this.routes = new Map();
    this.held = 0;
    return cells;
  }

  private route(row: RequestRecord): Route {
    const project = row.project_id ?? '';
    const key = row.key_id ?? '';
    const byModel = within(within(within(this.routes, row.org_id), project), key);
    let route = byModel.get(row.model);
    if (route) return route;
    const id = `${row.org_id}\u0000${project}\u0000${key}\u0000${row.model}`;
    const dims = [row.org_id, project, key, row.model];
    route = {
      id,
      dims,
      usage: sumsOf(this.usage, id, dims),
      cache: sumsOf(this.cache, id, dims),
      byDim: ['', project, key, row.model].map((value, dim) =>
        sumsOf(this.byDim, `${row.org_id}\u0000${dim}\u0000${value}`, [row.org_id, dim, value]),
      ),
      outcomes: new Map(),
      board: ['', project, key, row.model].map((value, dim) => {
        const id = `${row.org_id}\u0000${dim}\u0000${value}`;
        let cells = this.board.get(id);
        if (!cells) this.board.set(id, (cells = { dims: [row.org_id, dim, value], byBucket: new Map() }));
        return cells.byBucket;
      }),
    };
    byModel.set(row.model, route);
    return route;
  }

  private outcomeSums(route: Route, row: RequestRecord): Sums<[number]> {
    const statusClass = Math.trunc(row.status / 100);
    const byReason = within(route.outcomes, statusClass);
    let sums = byReason.get(row.termination_reason);
    if (!sums) {
      const id = `${route.id}\u0000${statusClass}\u0000${row.termination_reason}`;
      sums = sumsOf(this.outcome, id, [...route.dims, statusClass, row.termination_reason]);
      byReason.set(row.termination_reason, sums);
    }
    return sums;
  }
}

function sumsOf<T extends number[]>(family: Map<string, Sums<T>>, id: string, dims: (string | number)[]): Sums<T> {
  let sums = family.get(id);
  if (!sums) family.set(id, (sums = new Sums<T>(dims)));
  return sums;
}
