import type { Database, Statement } from 'better-sqlite3';
import { GRAINS } from '../../analytics/windows.js';
import type { RequestRecord } from './request-record.js';

/**
 * Keeps the rollup tables (migrations/002_rollups.sql, 004_dimension_rollups.sql,
 * 006_minute_rollups.sql) in step with the rows being written, inside the writer's
 * transaction. Each row is added to the finest cell of each kind of table only (usage by
 * five minutes, one dimension by the minute, outcomes by the hour); when written, the
 * coarser grains are summed from those cells, and each cell goes to its table with one
 * upsert. A row then costs 6 cell additions instead of 21. (A trigger did the same per row
 * and cost the import four fifths of its speed.)
 */

/** Measures of a usage cell, in the tables' column order after the dimensions. */
type Usage = [
  requests: number,
  totalMs: number,
  ttftCount: number,
  ttftMs: number,
  speedTokens: number,
  speedMs: number,
  tokens: number,
  costMicro: number,
];

/** What one row adds to an outcome cell. */
const ONE_REQUEST: [number] = [1];

/** Finest cells held before they are written: bounds memory on a long import. */
const MAX_CELLS = 200_000;

const USAGE_DIMS = 'org_id, bucket, project_id, key_id, model';
const USAGE_MEASURES = [
  'requests',
  'total_ms',
  'ttft_count',
  'ttft_ms',
  'speed_tokens',
  'speed_ms',
  'tokens',
  'cost_micro',
];
const OUTCOME_DIMS = `${USAGE_DIMS}, status_class, termination_reason`;

function upsert(db: Database, table: string, dims: string, measures: string[]): Statement {
  const columns = `${dims}, ${measures.join(', ')}`;
  return db.prepare(
    `INSERT INTO ${table} (${columns}) VALUES (${columns
      .split(', ')
      .map(() => '?')
      .join(', ')})
    ON CONFLICT DO UPDATE SET ${measures.map((m) => `${m} = ${m} + excluded.${m}`).join(', ')}`,
  );
}

/** The finest cells of one table row's dimensions (all but the bucket), by bucket. */
class Cells<T extends number[]> {
  readonly byBucket = new Map<number, T>();
  // Rows mostly come in time order: the last cell used is usually the next one.
  private lastBucket = NaN;
  private last: T | undefined;

  constructor(readonly dims: readonly (string | number)[]) {}

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
}

/** One kind of table: its grains, finest last, and the finest cells held for it. */
class Family<T extends number[]> {
  readonly finestMs: number;
  readonly cells = new Map<string, Cells<T>>();

  constructor(private readonly tables: readonly { ms: number; statement: Statement }[]) {
    this.finestMs = tables.at(-1)!.ms;
  }

  cellsOf(id: string, dims: (string | number)[]): Cells<T> {
    let cells = this.cells.get(id);
    if (!cells) this.cells.set(id, (cells = new Cells<T>(dims)));
    return cells;
  }

  /** Writes every grain's cells, each coarser one summed from the finest, and forgets them. */
  write(): void {
    for (const { dims, byBucket } of this.cells.values()) {
      for (const { ms, statement } of this.tables) {
        const cells = ms === this.finestMs ? byBucket : coarser(byBucket, ms);
        // The statements take the bucket second, after the organisation.
        for (const [bucket, measures] of cells) statement.run(dims[0], bucket, ...dims.slice(1), ...measures);
      }
    }
    this.cells.clear();
  }
}

/** Finer cells summed into cells of `ms` (a multiple of their grain). */
function coarser<T extends number[]>(byBucket: Map<number, T>, ms: number): Map<number, T> {
  const sums = new Map<number, T>();
  for (const [bucket, measures] of byBucket) {
    const at = bucket - (bucket % ms);
    const sum = sums.get(at);
    if (!sum) sums.set(at, measures.slice() as T);
    else for (let i = 0; i < measures.length; i++) sum[i]! += measures[i]!;
  }
  return sums;
}

/**
 * The cells one combination of organisation, project, key and model adds to: looked up
 * once per combination and batch instead of once per row.
 */
interface Route {
  id: string;
  /** The combination's columns, in the order of the full cells' key after the bucket. */
  dims: (string | number)[];
  usage: Cells<Usage>;
  /** The cells of each `dim` code: the organisation, project, key, model. */
  byDim: Cells<Usage>[];
  /** Per status class and termination reason. */
  outcomes: Map<string, Cells<[number]>>;
}

export class RollupWriter {
  private readonly usage: Family<Usage>;
  private readonly byDim: Family<Usage>;
  private readonly outcome: Family<[number]>;
  private readonly routes = new Map<string, Route>();
  private held = 0;

  constructor(db: Database) {
    const family = <T extends number[]>(
      table: (grain: (typeof GRAINS)[number]) => string | null,
      dims: string,
      measures: string[],
    ) =>
      new Family<T>(
        GRAINS.flatMap((grain) => {
          const name = table(grain);
          return name ? [{ ms: grain.ms, statement: upsert(db, name, dims, measures) }] : [];
        }),
      );
    this.usage = family((grain) => grain.usage, USAGE_DIMS, USAGE_MEASURES);
    this.byDim = family((grain) => grain.dims, 'org_id, bucket, dim, value', USAGE_MEASURES);
    this.outcome = family((grain) => grain.outcome, OUTCOME_DIMS, ['requests']);
  }

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
    if (route.usage.add(ts - (ts % this.usage.finestMs), delta)) made++;
    const minute = ts - (ts % this.byDim.finestMs);
    for (const cells of route.byDim) if (cells.add(minute, delta)) made++;
    if (this.outcomeCells(route, row).add(ts - (ts % this.outcome.finestMs), ONE_REQUEST)) made++;
    this.held += made;
    if (this.held >= MAX_CELLS) this.flush();
  }

  /** Adds the cells summed so far to the tables; call before the transaction commits. */
  flush(): void {
    this.usage.write();
    this.byDim.write();
    this.outcome.write();
    this.routes.clear();
    this.held = 0;
  }

  private route(row: RequestRecord): Route {
    const project = row.project_id ?? '';
    const key = row.key_id ?? '';
    const id = `${row.org_id}\u0000${project}\u0000${key}\u0000${row.model}`;
    let route = this.routes.get(id);
    if (route) return route;
    const dims = [row.org_id, project, key, row.model];
    route = {
      id,
      dims,
      usage: this.usage.cellsOf(id, dims),
      byDim: ['', project, key, row.model].map((value, dim) =>
        this.byDim.cellsOf(`${row.org_id}\u0000${dim}\u0000${value}`, [row.org_id, dim, value]),
      ),
      outcomes: new Map(),
    };
    this.routes.set(id, route);
    return route;
  }

  private outcomeCells(route: Route, row: RequestRecord): Cells<[number]> {
    const statusClass = Math.trunc(row.status / 100);
    const id = `${statusClass}\u0000${row.termination_reason}`;
    let cells = route.outcomes.get(id);
    if (!cells) {
      cells = this.outcome.cellsOf(`${route.id}\u0000${id}`, [...route.dims, statusClass, row.termination_reason]);
      route.outcomes.set(id, cells);
    }
    return cells;
  }
}
