import { describe, expect, it } from 'vitest';
import { addBin, encode, mergeEncoded, type Bins } from '../../server/stores/telemetry/latency-sketch.js';
import { HeldCells, storableCells } from '../../server/stores/telemetry/postgres/empty-store.js';
import { ROLLUP_TABLES, type RollupRow, type RollupRows } from '../../server/stores/telemetry/rollup-writer.js';

/**
 * The cells of an import into an empty request log on PostgreSQL, before they are written: an
 * hour or a day summed across the import's parts, each written once no later part adds to it;
 * a minute written with its part. Sums add, sketches merge, the later time stays, as the
 * database's upserts do.
 */

const DAY = ROLLUP_TABLES.findIndex((table) => table.name === 'rollup_board_day');
const MINUTE = ROLLUP_TABLES.findIndex((table) => table.name === 'rollup_dim_1m');

function sketch(...values: number[]): Buffer {
  const bins: Bins = new Map();
  for (const bin of values) addBin(bins, bin);
  return encode(bins);
}

/** A row of `index`'s table: its key from `key`, every sum `n`, sketches of `bins`, its time `last`. */
function row(index: number, key: (string | number)[], n: number, bins: number[], last: number | null): RollupRow {
  const table = ROLLUP_TABLES[index]!;
  return table.columns.map((column, c) => {
    if (c < table.keyColumns) return key[c]!;
    if (table.sketches.includes(column)) return bins.length === 0 ? null : sketch(...bins);
    if (table.latest.includes(column)) return last;
    return n;
  });
}

/** One part: `cells` for some tables, none for the others. */
function part(cells: Record<number, RollupRow[]>): RollupRows {
  return ROLLUP_TABLES.map((_, index) => cells[index] ?? []);
}

describe("an empty log's import cells", () => {
  it('holds an hour or a day until a part no longer adds to it, summed; a minute goes with its part', () => {
    const held = new HeldCells();
    const a = ['org', 1, 86_400, 'k-a'];
    const b = ['org', 1, 86_400, 'k-b'];
    const minute = row(MINUTE, ['org', 60, 1, 'k-a'], 1, [], null);
    // The first part: nothing of a day is written yet, its minute is.
    const first = held.add(
      part({ [DAY]: [row(DAY, a, 2, [10, 11], 500), row(DAY, b, 1, [3], null)], [MINUTE]: [minute] }),
    );
    expect(first[DAY]).toEqual([]);
    expect(first[MINUTE]).toEqual([minute]);
    // The second adds to a, not to b: b is written, whole.
    const second = held.add(part({ [DAY]: [row(DAY, a, 5, [11], null)] }));
    expect(second[DAY]).toEqual([row(DAY, b, 1, [3], null)]);
    // The third adds to a again, after a null time and a sketch of its own.
    expect(held.add(part({ [DAY]: [row(DAY, a, 1, [], 700)] }))[DAY]).toEqual([]);
    const rest = held.take();
    expect(rest[DAY]).toEqual([row(DAY, a, 8, [10, 11, 11], 700)]);
    expect(held.take()[DAY]).toEqual([]);
  });

  it('makes one cell of two whose texts PostgreSQL stores alike, summed', () => {
    const odd = row(MINUTE, ['org', 60, 1, 'svc/\u0000x'], 2, [], null);
    const alike = row(MINUTE, ['org', 60, 1, 'svc/\uFFFDx'], 3, [], null);
    const other = row(MINUTE, ['org', 60, 1, 'svc/y'], 1, [], null);
    const stored = storableCells(part({ [MINUTE]: [odd, alike, other] }));
    expect(stored[MINUTE]).toEqual([row(MINUTE, ['org', 60, 1, 'svc/\uFFFDx'], 5, [], null), other]);
    // Without a U+0000 a part is returned as it is.
    const plain = part({ [MINUTE]: [other] });
    expect(storableCells(plain)[MINUTE]).toBe(plain[MINUTE]);
    // Sketches merge as the database merges them.
    const [x, y] = [row(DAY, ['o\u0000', 1, 0, 'v'], 1, [4, 5], 1), row(DAY, ['o\uFFFD', 1, 0, 'v'], 1, [5], 2)];
    const latency = ROLLUP_TABLES[DAY]!.columns.indexOf('latency');
    expect(storableCells(part({ [DAY]: [x, y] }))[DAY]![0]![latency]).toEqual(
      mergeEncoded(x[latency] as Buffer, y[latency] as Buffer),
    );
  });
});
