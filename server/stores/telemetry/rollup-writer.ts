import type { Database, Statement } from 'better-sqlite3';
import { addCell, BOARD_MEASURES, newBoardCell, type BoardCell } from './board-cells.js';
import { encode } from './latency-sketch.js';
import { BOARD_GRAINS, GRAINS } from './rollup-grains.js';
import {
  CACHE_MEASURES,
  FINEST_MS,
  type BoardCells,
  type Cells,
  type Family,
  type RollupCells,
} from './rollup-sums.js';

/**
 * Adds the cells summed by `RollupSums` to the rollup tables, inside the import's
 * transaction: each grain coarser than the finest is summed from the finest cells, and
 * each cell goes to its table with one upsert. (A trigger did the same per row and cost
 * the import four fifths of its speed.)
 */

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

type Tables = { ms: number; statement: Statement }[];

/** A dashboard cell's upsert: measures add up, sketches merge (latency-sketch.ts's sketch_merge), the last success is the later. */
function boardUpsert(db: Database, table: string): Statement {
  const columns = ['org_id', 'dim', 'bucket', 'value', ...BOARD_MEASURES, 'latency', 'ttft', 'last_ok'];
  // SQLite's max(a, b) is null when either is: a cell's last success stays when the new rows have none.
  return db.prepare(
    `INSERT INTO ${table} (${columns.join(', ')}) VALUES (${columns.map(() => '?').join(', ')})
    ON CONFLICT DO UPDATE SET ${BOARD_MEASURES.map((m) => `${m} = ${m} + excluded.${m}`).join(', ')},
      latency = sketch_merge(latency, excluded.latency), ttft = sketch_merge(ttft, excluded.ttft),
      last_ok = COALESCE(max(last_ok, excluded.last_ok), last_ok, excluded.last_ok)`,
  );
}

function coarserBoard(byBucket: Map<number, BoardCell>, ms: number): Map<number, BoardCell> {
  const sums = new Map<number, BoardCell>();
  for (const [bucket, cell] of byBucket) {
    const at = bucket - (bucket % ms);
    let sum = sums.get(at);
    if (!sum) sums.set(at, (sum = newBoardCell()));
    addCell(sum, cell);
  }
  return sums;
}

export class RollupWriter {
  private readonly tables: Record<Family, Tables>;
  private readonly board: Tables;

  constructor(db: Database) {
    const tables = (table: 'usage' | 'dims' | 'outcome' | 'cache', dims: string, measures: string[]) =>
      GRAINS.flatMap((grain) => {
        const name = grain[table];
        return name ? [{ ms: grain.ms, statement: upsert(db, name, dims, measures) }] : [];
      });
    this.tables = {
      usage: tables('usage', USAGE_DIMS, USAGE_MEASURES),
      byDim: tables('dims', 'org_id, bucket, dim, value', USAGE_MEASURES),
      outcome: tables('outcome', OUTCOME_DIMS, ['requests']),
      cache: tables('cache', USAGE_DIMS, [...CACHE_MEASURES]),
    };
    this.board = BOARD_GRAINS.map((grain) => ({ ms: grain.ms, statement: boardUpsert(db, grain.board!) }));
  }

  /** Adds `cells` to every grain's table. */
  write(cells: RollupCells): void {
    for (const family of ['usage', 'byDim', 'outcome', 'cache'] as const) {
      for (const { dims, byBucket } of cells[family] as Cells<number[]>[]) {
        for (const { ms, statement } of this.tables[family]) {
          const grainCells = ms === FINEST_MS[family] ? byBucket : coarser(byBucket, ms);
          // The statements take the bucket second, after the organisation.
          for (const [bucket, measures] of grainCells) statement.run(dims[0], bucket, ...dims.slice(1), ...measures);
        }
      }
    }
    for (const { dims, byBucket } of cells.board) this.writeBoard(dims, byBucket);
  }

  private writeBoard([orgId, dim, value]: BoardCells['dims'], byBucket: Map<number, BoardCell>): void {
    for (const { ms, statement } of this.board) {
      const grainCells = ms === FINEST_MS.board ? byBucket : coarserBoard(byBucket, ms);
      for (const [bucket, cell] of grainCells) {
        const ttft = cell.ttft && encode(cell.ttft);
        statement.run(orgId, dim, bucket, value, ...cell.measures, encode(cell.latency), ttft, cell.lastOk);
      }
    }
  }
}
