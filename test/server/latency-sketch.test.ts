import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import {
  addBin,
  addEncoded,
  binOf,
  encode,
  mergeEncoded,
  RELATIVE_ERROR,
  SketchAccumulator,
  type Bins,
} from '../../server/stores/telemetry/latency-sketch.js';
import { SqliteControlStore } from '../../server/stores/control/store.js';
import { recordRequests } from '../../server/ingest/record-requests.js';
import { openTelemetry } from '../../server/stores/telemetry/store.js';
import { dropAddedColumns, requestRecord, seededRandom } from './request-rows.js';

const sketchOf = (values: number[]): Bins => {
  const bins: Bins = new Map();
  for (const value of values) addBin(bins, binOf(value));
  return bins;
};

const quantilesOf = (bins: Bins, qs: number[]) => {
  const accumulator = new SketchAccumulator();
  accumulator.addEncoded(encode(bins));
  return accumulator.quantiles(qs);
};

const exact = (values: number[], q: number) => [...values].sort((a, b) => a - b)[Math.floor(q * (values.length - 1))]!;

describe('the latency sketch', () => {
  it('reads every quantile back within its relative error, over latencies from a tenth of a millisecond to minutes', () => {
    const random = seededRandom(3);
    const values = Array.from({ length: 20_000 }, () => 0.1 * Math.exp(random() * 14));
    const sketch = sketchOf(values);
    const qs = [0, 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99, 0.999, 1];
    const got = quantilesOf(sketch, qs)!;
    qs.forEach((q, i) => {
      const want = exact(values, q);
      expect(Math.abs(got[i]! - want) / want, `q ${q}`).toBeLessThanOrEqual(RELATIVE_ERROR);
    });
  });

  it('merges two sketches into the sketch of their union, through the stored form', () => {
    const random = seededRandom(9);
    const a = Array.from({ length: 500 }, () => 1 + random() * 300);
    const b = Array.from({ length: 700 }, () => 200 + random() * 5000);
    const merged: Bins = new Map();
    addEncoded(merged, mergeEncoded(encode(sketchOf(a)), encode(sketchOf(b)))!);
    expect(new Map([...merged].sort())).toEqual(new Map([...sketchOf([...a, ...b])].sort()));
    expect(mergeEncoded(null, encode(sketchOf(a)))).toEqual(encode(sketchOf(a)));
    expect(mergeEncoded(null, null)).toBeNull();
  });

  it('adds one accumulator to another as if their sketches were added to it, the empty one included', () => {
    const random = seededRandom(5);
    const a = Array.from({ length: 400 }, () => 0.5 + random() * 40);
    const b = Array.from({ length: 900 }, () => 30 + random() * 9000);
    const qs = [0, 0.5, 0.95, 0.99, 1];
    const of = (values: number[]) => {
      const accumulator = new SketchAccumulator();
      accumulator.addEncoded(encode(sketchOf(values)));
      return accumulator;
    };
    const whole = new SketchAccumulator();
    whole.addAll(new SketchAccumulator());
    whole.addAll(of(b));
    whole.addAll(of(a));
    expect(whole.quantiles(qs)).toEqual(quantilesOf(sketchOf([...a, ...b]), qs));
    expect(new SketchAccumulator().quantiles(qs)).toBeNull();
  });

  it('stores small counts in fewer bytes, and reads sketches stored in the first encoding', () => {
    const few = sketchOf([1, 2, 3, 50, 50, 400]);
    // A byte for the counts' width, then three bytes a bin (an int16 bin, a one-byte count).
    expect(encode(few).length).toBe(1 + 3 * few.size);
    const many: Bins = new Map([
      [10, 300],
      [20, 1],
    ]);
    expect(encode(many).length).toBe(1 + 4 * 2);
    const most: Bins = new Map([[-5, 70_000]]);
    expect(encode(most).length).toBe(1 + 6);
    // The first encoding: (int16 bin, uint32 count) pairs, no header; its length a multiple of 6.
    const wide = (bins: Bins) =>
      Buffer.concat(
        [...bins].map(([bin, count]) => {
          const pair = Buffer.alloc(6);
          pair.writeInt16LE(bin, 0);
          pair.writeUInt32LE(count, 2);
          return pair;
        }),
      );
    for (const bins of [few, many, most]) {
      expect(encode(bins).length % 6, 'never read as the first encoding').not.toBe(0);
      const read: Bins = new Map();
      addEncoded(read, wide(bins));
      expect(read).toEqual(bins);
      expect(mergeEncoded(wide(bins), encode(bins))).toEqual(
        encode(new Map([...bins].map(([bin, count]) => [bin, 2 * count]))),
      );
    }
    const accumulator = new SketchAccumulator();
    accumulator.addEncoded(wide(few));
    expect(accumulator.quantiles([0, 1])).toEqual(quantilesOf(few, [0, 1]));
  });

  it('keeps zero as zero and says nothing of an empty sketch', () => {
    expect(quantilesOf(sketchOf([0, 0, 0, 12]), [0.5, 1])).toEqual([0, expect.closeTo(12, 0)]);
    expect(quantilesOf(new Map(), [0.5])).toBeNull();
    // One accumulator serves bucket after bucket.
    const accumulator = new SketchAccumulator();
    accumulator.addEncoded(encode(sketchOf([5000, 6000])));
    accumulator.reset();
    accumulator.addEncoded(encode(sketchOf([3])));
    expect(accumulator.quantiles([0, 1])![1]).toBeCloseTo(3, 1);
  });
});

describe("migrations 008 and 009's dashboard and cache cells", () => {
  it('fills the cells of a store that had rows before it exactly as the import writes them', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'board-backfill-'));
    const path = join(folder, 'telemetry.db');
    const control = SqliteControlStore.open(join(folder, 'control.db'), { accessSeconds: 60, refreshSeconds: 600 });
    const random = seededRandom(21);
    const rows = Array.from({ length: 3000 }, (_, i) => ({
      ...requestRecord(i),
      ts: Date.UTC(2026, 10, 1) + Math.floor(random() * 3 * 86_400_000),
      model: random() < 0.5 ? 'openai/gpt-4o-mini' : 'svc/fast',
      status: random() < 0.8 ? 200 : 429,
      total_ms: 1 + random() * 5000,
      ttft_ms: random() < 0.3 ? null : random() * 900,
    }));
    try {
      await recordRequests(control, path, rows);
    } finally {
      await control.close();
    }
    const tables = [
      'rollup_board_5m',
      'rollup_board_hour',
      'rollup_board_day',
      'rollup_cache_hour',
      'rollup_cache_day',
    ];
    const contents = (db: BetterSqlite3.Database) =>
      tables.map(
        (table) => db.prepare(`SELECT * FROM ${table} ORDER BY 1, 2, 3, 4`).all() as Record<string, unknown>[],
      );
    // speed_ms is a sum of doubles, which the migration adds in another order: equal to a few ulps.
    const nearly = (cells: Record<string, unknown>[][]) =>
      cells.map((rows) =>
        rows.map((row) => ('speed_ms' in row ? { ...row, speed_ms: expect.closeTo(row.speed_ms as number, 6) } : row)),
      );
    const written = openTelemetry(path);
    const byImport = contents(written);
    for (const cells of byImport) expect(cells.length).toBeGreaterThan(0);
    for (const table of tables) written.exec(`DROP TABLE ${table}`);
    dropAddedColumns(written);
    written.pragma('user_version = 7');
    written.close();

    const migrated = openTelemetry(path);
    try {
      expect(contents(migrated)).toEqual(nearly(byImport));
    } finally {
      migrated.close();
    }
  });
});
