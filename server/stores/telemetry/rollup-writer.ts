import type { Database, Statement } from 'better-sqlite3';
import { GRAINS, type Grain } from '../../analytics/windows.js';
import type { RequestRecord } from './request-record.js';

/**
 * Keeps the rollup tables (migrations/002_rollups.sql, 004_dimension_rollups.sql) in step with the rows being
 * written: cells are summed in memory and added to the tables with one upsert per cell,
 * inside the writer's transaction. (A trigger did the same per row and cost the import
 * four fifths of its speed.)
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

interface Cells<T> {
  /** The row's dimensions other than the bucket, in column order. */
  dims: (string | number)[];
  byBucket: Map<number, T>;
}

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

function cellsOf<T>(map: Map<string, Cells<T>>, id: string, dims: () => (string | number)[]): Map<number, T> {
  let cells = map.get(id);
  if (!cells) {
    cells = { dims: dims(), byBucket: new Map() };
    map.set(id, cells);
  }
  return cells.byBucket;
}

function addUsage(cells: Map<number, Usage>, bucket: number, delta: Usage): boolean {
  const cell = cells.get(bucket);
  if (!cell) {
    cells.set(bucket, [...delta]);
    return true;
  }
  for (let i = 0; i < delta.length; i++) cell[i]! += delta[i]!;
  return false;
}

export class RollupWriter {
  /** Per grain: cells by dimensions, then by bucket. */
  private readonly usage = new Map<Grain, Map<string, Cells<Usage>>>();
  private readonly dims = new Map<Grain, Map<string, Cells<Usage>>>();
  private readonly outcomes = new Map<Grain, Map<string, Cells<[number]>>>();
  private readonly statements = new Map<string, Statement>();
  private held = 0;

  constructor(db: Database) {
    for (const grain of GRAINS) {
      this.usage.set(grain, new Map());
      this.statements.set(grain.usage, upsert(db, grain.usage, USAGE_DIMS, USAGE_MEASURES));
      this.dims.set(grain, new Map());
      this.statements.set(grain.dims, upsert(db, grain.dims, 'org_id, bucket, dim, value', USAGE_MEASURES));
      if (grain.outcome) {
        this.outcomes.set(grain, new Map());
        this.statements.set(grain.outcome, upsert(db, grain.outcome, OUTCOME_DIMS, ['requests']));
      }
    }
  }

  add(row: RequestRecord): void {
    const project = row.project_id ?? '';
    const key = row.key_id ?? '';
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
    const statusClass = Math.trunc(row.status / 100);
    const usageId = `${row.org_id}\u0000${project}\u0000${key}\u0000${row.model}`;
    const outcomeId = `${usageId}\u0000${statusClass}\u0000${row.termination_reason}`;
    // rollup_dim_<grain> by its `dim` code: the organisation, project, key, model.
    const dimValues = ['', project, key, row.model];
    const dimIds = dimValues.map((value, dim) => `${row.org_id}\u0000${dim}\u0000${value}`);
    for (const grain of GRAINS) {
      const bucket = row.ts - (row.ts % grain.ms);
      const usage = cellsOf(this.usage.get(grain)!, usageId, () => [row.org_id, project, key, row.model]);
      if (addUsage(usage, bucket, delta)) this.held++;
      const dims = this.dims.get(grain)!;
      for (let dim = 0; dim < dimValues.length; dim++) {
        const cells = cellsOf(dims, dimIds[dim]!, () => [row.org_id, dim, dimValues[dim]!]);
        if (addUsage(cells, bucket, delta)) this.held++;
      }

      const outcomes = this.outcomes.get(grain);
      if (!outcomes) continue;
      const byBucket = cellsOf(outcomes, outcomeId, () => [
        row.org_id,
        project,
        key,
        row.model,
        statusClass,
        row.termination_reason,
      ]);
      const count = byBucket.get(bucket);
      if (count) count[0] += 1;
      else {
        byBucket.set(bucket, [1]);
        this.held++;
      }
    }
    if (this.held >= MAX_CELLS) this.flush();
  }

  /** Adds the cells summed so far to the tables; call before the transaction commits. */
  flush(): void {
    const write = <T extends number[]>(table: string, byDims: Map<string, Cells<T>>) => {
      const statement = this.statements.get(table)!;
      for (const { dims, byBucket } of byDims.values()) {
        // Each statement takes the bucket second (see the column lists above).
        for (const [bucket, measures] of byBucket) statement.run(dims[0], bucket, ...dims.slice(1), ...measures);
      }
      byDims.clear();
    };
    for (const [grain, byDims] of this.usage) write(grain.usage, byDims);
    for (const [grain, byDims] of this.dims) write(grain.dims, byDims);
    for (const [grain, byDims] of this.outcomes) write(grain.outcome!, byDims);
    this.held = 0;
  }
}
