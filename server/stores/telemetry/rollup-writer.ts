import type { Database } from 'better-sqlite3';
import { addCell, BOARD_MEASURES, newBoardCell, type BoardCell } from './board-cells.js';
import { encode } from './latency-sketch.js';
import { BufferedInsert } from './buffered-insert.js';
import { BOARD_GRAINS, GRAINS, THINNED_TABLES } from './rollup-grains.js';
import { CACHE_MEASURES, FINEST_MS, type Cells, type Family, type RollupCells } from './rollup-sums.js';

/**
 * Adds the cells summed by `RollupSums` to the rollup tables, inside the import's
 * transaction. `rollupRows` sums each grain coarser than the finest from the finest cells
 * and encodes the sketches, on the import's reading thread; `RollupWriter` upserts the rows,
 * 16 to a statement, on the writing one, the import's narrower stage. (A trigger did the
 * same per row and cost the import four fifths of its speed.) Measured, 500k NDJSON rows:
 * the writing thread ~2 s less busy, ~4 µs a row.
 */

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

/** A rollup table's upsert row: its dimensions (the bucket second), then its measures. */
export type RollupRow = (string | number | Uint8Array | null)[];

/** Rows for each table, in `TABLES` order: what `RollupWriter.write` takes. */
export type RollupRows = RollupRow[][];

type FamilyTable = { family: Family; ms: number; name: string };

/** The tables of the cells, in the order of a `RollupRows`; the dashboard's last. */
const TABLES: FamilyTable[] = (
  [
    ['usage', 'usage'],
    ['byDim', 'dims'],
    ['outcome', 'outcome'],
    ['cache', 'cache'],
  ] as const
).flatMap(([family, column]) =>
  GRAINS.flatMap((grain) => {
    const name = grain[column];
    return name ? [{ family, ms: grain.ms, name }] : [];
  }),
);
const BOARD_TABLES = BOARD_GRAINS.map((grain) => ({ ms: grain.ms, name: grain.board! }));

/** A rollup table as the writers of both stores upsert it. */
export interface RollupTable {
  name: string;
  /** Its buckets' length. */
  ms: number;
  /** The columns of a `RollupRow`, in order: the cell's key first. */
  columns: string[];
  /** How many of `columns` are the cell's key (its primary key's columns). */
  keyColumns: number;
  /** Measures added to the stored cell's. */
  sums: string[];
  /** Latency sketches merged with the stored cell's (`sketch_merge`, on both stores). */
  sketches: string[];
  /** Times of which the stored cell keeps the later (either may be null). */
  latest: string[];
}

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
const USAGE_KEY = ['org_id', 'bucket', 'project_id', 'key_id', 'model'];
const FAMILY_COLUMNS: Record<Family, { key: string[]; sums: string[] }> = {
  usage: { key: USAGE_KEY, sums: USAGE_MEASURES },
  byDim: { key: ['org_id', 'bucket', 'dim', 'value'], sums: USAGE_MEASURES },
  outcome: { key: [...USAGE_KEY, 'status_class', 'termination_reason'], sums: ['requests'] },
  cache: { key: USAGE_KEY, sums: [...CACHE_MEASURES] },
};

/** Every rollup table, in the order of a `RollupRows`. */
export const ROLLUP_TABLES: RollupTable[] = [
  ...TABLES.map(({ family, name, ms }) => {
    const { key, sums } = FAMILY_COLUMNS[family];
    return { name, ms, columns: [...key, ...sums], keyColumns: key.length, sums, sketches: [], latest: [] };
  }),
  ...BOARD_TABLES.map(({ name, ms }) => ({
    name,
    ms,
    columns: ['org_id', 'dim', 'bucket', 'value', ...BOARD_MEASURES, 'latency', 'ttft', 'last_ok'],
    keyColumns: 4,
    sums: [...BOARD_MEASURES],
    sketches: ['latency', 'ttft'],
    latest: ['last_ok'],
  })),
];

/**
 * The upsert rows `cells` make in every grain's table: the coarser grains summed from the
 * finest cells, sketches encoded; the thinned tables' cells only from `fineFrom` (fine-cells.ts).
 * Pure, so the import's reading thread makes them and the writer's thread only writes.
 */
export function rollupRows(cells: RollupCells, fineFrom = -Infinity): RollupRows {
  const rows: RollupRows = [];
  for (const { family, ms, name } of TABLES) {
    const out: RollupRow[] = [];
    const from = THINNED_TABLES.includes(name) ? fineFrom : -Infinity;
    for (const { dims, byBucket } of cells[family] as Cells<number[]>[]) {
      const grainCells = ms === FINEST_MS[family] ? byBucket : coarser(byBucket, ms);
      for (const [bucket, measures] of grainCells) {
        // The tables take the bucket second, after the organisation.
        if (bucket >= from) out.push([dims[0]!, bucket, ...dims.slice(1), ...measures]);
      }
    }
    rows.push(out);
  }
  for (const { ms } of BOARD_TABLES) {
    const out: RollupRow[] = [];
    for (const { dims, byBucket } of cells.board) {
      const [orgId, dim, value] = dims;
      const grainCells = ms === FINEST_MS.board ? byBucket : coarserBoard(byBucket, ms);
      for (const [bucket, cell] of grainCells) {
        const ttft = cell.ttft && encode(cell.ttft);
        out.push([orgId!, dim!, bucket, value!, ...cell.measures, encode(cell.latency), ttft, cell.lastOk]);
      }
    }
    rows.push(out);
  }
  return rows;
}

/** A table's upsert on SQLite: measures add up, sketches merge, the later time stays. */
function upsert(db: Database, table: RollupTable): BufferedInsert {
  const set = [
    ...table.sums.map((m) => `${m} = ${m} + excluded.${m}`),
    ...table.sketches.map((m) => `${m} = sketch_merge(${m}, excluded.${m})`),
    // SQLite's max(a, b) is null when either is: the stored time stays when the new rows have none.
    ...table.latest.map((m) => `${m} = COALESCE(max(${m}, excluded.${m}), ${m}, excluded.${m})`),
  ];
  return new BufferedInsert(
    db,
    `${table.name} (${table.columns.join(', ')})`,
    table.columns.length,
    `ON CONFLICT DO UPDATE SET ${set.join(', ')}`,
  );
}

/** Adds `rollupRows` to the rollup tables, in the import's transaction. */
export class RollupWriter {
  private readonly statements: BufferedInsert[];

  constructor(db: Database) {
    this.statements = ROLLUP_TABLES.map((table) => upsert(db, table));
  }

  write(rows: RollupRows): void {
    this.statements.forEach((statement, table) => {
      for (const row of rows[table]!) statement.add(row);
      statement.flush();
    });
  }
}
