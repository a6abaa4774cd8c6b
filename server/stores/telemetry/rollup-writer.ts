import type { Database, Statement } from 'better-sqlite3';
import { GRAINS } from '../../analytics/windows.js';
import type { RequestRecord } from './request-record.js';

/**
 * Keeps the rollup tables (migrations/002_rollups.sql, 004_dimension_rollups.sql) in step
 * with the rows being written: cells are summed in memory and added to the tables with one
 * upsert per cell, inside the writer's transaction. (A trigger did the same per row and
 * cost the import four fifths of its speed.)
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

/** Cells held before they are written: bounds memory on a long import. */
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

/** The cells of one table row's dimensions (all but the bucket), by bucket. */
class Cells<T extends number[]> {
  readonly byBucket = new Map<number, T>();
  // Rows mostly come in time order: the last cell used is usually the next one.
  private lastBucket = NaN;
  private last: T | undefined;

  constructor(readonly dims: readonly (string | number)[]) {}

  get(bucket: number): T | undefined {
    if (bucket === this.lastBucket) return this.last;
    const cell = this.byBucket.get(bucket);
    if (cell) this.remember(bucket, cell);
    return cell;
  }

  set(bucket: number, cell: T): void {
    this.byBucket.set(bucket, cell);
    this.remember(bucket, cell);
  }

  private remember(bucket: number, cell: T): void {
    this.lastBucket = bucket;
    this.last = cell;
  }
}

/** A table's cells held in memory, by an id of their dimensions, and its upsert. */
interface Held<T extends number[]> {
  statement: Statement;
  cells: Map<string, Cells<T>>;
}

/**
 * The cells one combination of organisation, project, key and model adds to, per grain:
 * looked up once per combination and batch instead of once per row.
 */
interface Route {
  id: string;
  /** The combination's columns, in the order of the full cells' key after the bucket. */
  dims: (string | number)[];
  /** Per grain, the full cells (none at grains kept by one dimension only). */
  usage: (Cells<Usage> | null)[];
  /** Per grain, the cells of each `dim` code: the organisation, project, key, model. */
  byDim: Cells<Usage>[][];
  /** Per status class and termination reason, the cells of each grain that has an outcome table. */
  outcomes: Map<string, (Cells<[number]> | null)[]>;
}

interface GrainTables {
  ms: number;
  usage: Held<Usage> | null;
  byDim: Held<Usage>;
  outcome: Held<[number]> | null;
}

export class RollupWriter {
  private readonly grains: GrainTables[];
  private readonly routes = new Map<string, Route>();
  private held = 0;

  constructor(db: Database) {
    const table = <T extends number[]>(name: string, dims: string, measures: string[]): Held<T> => ({
      statement: upsert(db, name, dims, measures),
      cells: new Map(),
    });
    this.grains = GRAINS.map((grain) => ({
      ms: grain.ms,
      usage: grain.usage ? table(grain.usage, USAGE_DIMS, USAGE_MEASURES) : null,
      // The statements take the bucket second (see flush).
      byDim: table(grain.dims, 'org_id, bucket, dim, value', USAGE_MEASURES),
      outcome: grain.outcome ? table(grain.outcome, OUTCOME_DIMS, ['requests']) : null,
    }));
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
    const route = this.route(row);
    const outcomes = this.outcomes(route, row);
    for (let g = 0; g < this.grains.length; g++) {
      const bucket = row.ts - (row.ts % this.grains[g]!.ms);
      const usage = route.usage[g];
      if (usage) this.addTo(usage, bucket, delta);
      for (const cells of route.byDim[g]!) this.addTo(cells, bucket, delta);
      const outcome = outcomes[g];
      if (outcome) this.addTo(outcome, bucket, ONE_REQUEST);
    }
    if (this.held >= MAX_CELLS) this.flush();
  }

  /** Adds the cells summed so far to the tables; call before the transaction commits. */
  flush(): void {
    const write = <T extends number[]>({ statement, cells }: Held<T>) => {
      for (const { dims, byBucket } of cells.values()) {
        for (const [bucket, measures] of byBucket) statement.run(dims[0], bucket, ...dims.slice(1), ...measures);
      }
      cells.clear();
    };
    for (const tables of this.grains) {
      if (tables.usage) write(tables.usage);
      write(tables.byDim);
      if (tables.outcome) write(tables.outcome);
    }
    this.routes.clear();
    this.held = 0;
  }

  private addTo<T extends number[]>(cells: Cells<T>, bucket: number, delta: T): void {
    const cell = cells.get(bucket);
    if (cell) for (let i = 0; i < delta.length; i++) cell[i]! += delta[i]!;
    else {
      cells.set(bucket, delta.slice() as T);
      this.held++;
    }
  }

  private route(row: RequestRecord): Route {
    const project = row.project_id ?? '';
    const key = row.key_id ?? '';
    const id = `${row.org_id}\u0000${project}\u0000${key}\u0000${row.model}`;
    let route = this.routes.get(id);
    if (route) return route;
    const dims = [row.org_id, project, key, row.model];
    const dimValues = ['', project, key, row.model];
    route = {
      id,
      dims,
      usage: this.grains.map((tables) => tables.usage && cellsOf(tables.usage, id, dims)),
      byDim: this.grains.map((tables) =>
        dimValues.map((value, dim) =>
          cellsOf(tables.byDim, `${row.org_id}\u0000${dim}\u0000${value}`, [row.org_id, dim, value]),
        ),
      ),
      outcomes: new Map(),
    };
    this.routes.set(id, route);
    return route;
  }

  private outcomes(route: Route, row: RequestRecord): (Cells<[number]> | null)[] {
    const statusClass = Math.trunc(row.status / 100);
    const id = `${statusClass}\u0000${row.termination_reason}`;
    let cells = route.outcomes.get(id);
    if (!cells) {
      const dims = [...route.dims, statusClass, row.termination_reason];
      cells = this.grains.map((tables) => tables.outcome && cellsOf(tables.outcome, `${route.id}\u0000${id}`, dims));
      route.outcomes.set(id, cells);
    }
    return cells;
  }
}

function cellsOf<T extends number[]>(held: Held<T>, id: string, dims: (string | number)[]): Cells<T> {
  let cells = held.cells.get(id);
  if (!cells) {
    cells = new Cells<T>(dims);
    held.cells.set(id, cells);
  }
  return cells;
}
