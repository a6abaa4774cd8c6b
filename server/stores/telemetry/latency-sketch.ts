import type { Database } from 'better-sqlite3';

/**
 * Mergeable latency sketches for the rollups (DDSketch's log-scale bins, Masson et al., VLDB
 * 2019): a value x > 0 falls in bin i = ceil(log_γ x), which holds (γ^(i-1), γ^i], and any
 * quantile read back as the bin's middle 2γ^i / (γ + 1) is within RELATIVE_ERROR of the
 * value at that rank. Bins add up, so the sketches of two cells merge into the sketch of their
 * union exactly: rollup cells of any grain and the rows at a window's edges combine without
 * losing the bound, which a stored percentile could never do.
 *
 * Stored as a BLOB: a byte W (1, 2 or 4: the width of the largest count), then (int16 bin,
 * W-byte count) pairs in bin order, little-endian; values of 0 or less share the bin ZERO_BIN and
 * read back as 0. A cell of five minutes counts a few requests a bin: its pairs take three bytes,
 * not the six of the first encoding, (int16 bin, uint32 count) pairs with no header, which a
 * store made before keeps until its cells are merged again. The two never have the same length
 * modulo 6 (1 + 3n, 1 + 4n, 1 + 6n against 6n), which is how a reader tells them apart.
 */

export const RELATIVE_ERROR = 0.01;
const GAMMA = (1 + RELATIVE_ERROR) / (1 - RELATIVE_ERROR);
const LN_GAMMA = Math.log(GAMMA);
const ZERO_BIN = -32_768;
const MAX_BIN = 32_767;
/** The first encoding's pairs: no header, a uint32 count. */
const WIDE_PAIR_BYTES = 6;

/** Bin counts by bin index: what a sketch is while it is being built or merged. */
export type Bins = Map<number, number>;

/** The bin of a value; every duration the request log holds (>= 0, finite) has one. */
export function binOf(value: number): number {
  if (!(value > 0)) return ZERO_BIN;
  return Math.min(MAX_BIN, Math.max(ZERO_BIN + 1, Math.ceil(Math.log(value) / LN_GAMMA)));
}

export function addBin(bins: Bins, bin: number, count = 1): void {
  bins.set(bin, (bins.get(bin) ?? 0) + count);
}

/** The width of a count, the same in SQL (migrations-postgres/008_narrow_sketches.sql). */
const countWidth = (largest: number) => (largest < 0x100 ? 1 : largest < 0x10000 ? 2 : 4);

export function encode(bins: Bins): Buffer {
  // No bins: no header either (as a merge of two empty sketches has always read).
  if (bins.size === 0) return Buffer.alloc(0);
  const sorted = [...bins.keys()].sort((a, b) => a - b);
  let largest = 0;
  for (const count of bins.values()) largest = Math.max(largest, count);
  const width = countWidth(largest);
  const stride = 2 + width;
  const out = Buffer.allocUnsafe(1 + sorted.length * stride);
  out[0] = width;
  sorted.forEach((bin, index) => {
    const at = 1 + index * stride;
    out.writeInt16LE(bin, at);
    out.writeUIntLE(bins.get(bin)!, at + 2, width);
  });
  return out;
}

/** Calls `pair` with each (bin, count) of a stored sketch, in either encoding. */
function eachPair(sketch: Uint8Array, pair: (bin: number, count: number) => void): void {
  const view = new DataView(sketch.buffer, sketch.byteOffset, sketch.byteLength);
  const wide = sketch.byteLength % WIDE_PAIR_BYTES === 0;
  const width = wide ? 4 : sketch[0]!;
  const stride = 2 + width;
  for (let at = wide ? 0 : 1; at + stride <= sketch.byteLength; at += stride) {
    const count =
      width === 1 ? view.getUint8(at + 2) : width === 2 ? view.getUint16(at + 2, true) : view.getUint32(at + 2, true);
    pair(view.getInt16(at, true), count);
  }
}

/** Adds a stored sketch's bins to `bins`. */
export function addEncoded(bins: Bins, sketch: Uint8Array): void {
  eachPair(sketch, (bin, count) => addBin(bins, bin, count));
}

/** Two stored sketches as one; either may be null (no values). */
export function mergeEncoded(a: Uint8Array | null, b: Uint8Array | null): Buffer | null {
  if (a === null || b === null) return (a ?? b) && Buffer.from(a ?? b!);
  const bins: Bins = new Map();
  addEncoded(bins, a);
  addEncoded(bins, b);
  return encode(bins);
}

const binValue = (bin: number) => (bin === ZERO_BIN ? 0 : (2 * GAMMA ** bin) / (GAMMA + 1));

/**
 * Stored sketches merged for a read: counts in a dense array over every bin, so that merging
 * hundreds of cells is a few additions per stored bin (a Map per bucket cost the dashboard a
 * fifth of a second a month). `reset` clears it for the next bucket.
 */
export class SketchAccumulator {
  private readonly counts = new Float64Array(MAX_BIN - ZERO_BIN + 1);
  private low = Infinity;
  private high = -Infinity;
  private total = 0;

  addEncoded(sketch: Uint8Array): void {
    eachPair(sketch, (bin, count) => {
      const slot = bin - ZERO_BIN;
      this.counts[slot]! += count;
      this.total += count;
      if (slot < this.low) this.low = slot;
      if (slot > this.high) this.high = slot;
    });
  }

  /** Adds what `other` holds, as if its sketches were added here. */
  addAll(other: SketchAccumulator): void {
    if (other.total === 0) return;
    for (let slot = other.low; slot <= other.high; slot++) this.counts[slot]! += other.counts[slot]!;
    this.total += other.total;
    if (other.low < this.low) this.low = other.low;
    if (other.high > this.high) this.high = other.high;
  }

  /**
   * The values at the quantiles `qs` (each in [0, 1], ascending), null when empty. The value at
   * quantile q is the one of rank floor(q × (n − 1)) in ascending order, 0-based.
   */
  quantiles(qs: readonly number[]): number[] | null {
    if (this.total === 0) return null;
    const values: number[] = [];
    let slot = this.low;
    let seen = this.counts[slot]!;
    for (const q of qs) {
      const rank = Math.floor(q * (this.total - 1));
      while (seen <= rank) seen += this.counts[++slot]!;
      values.push(binValue(slot + ZERO_BIN));
    }
    return values;
  }

  reset(): void {
    if (this.total > 0) this.counts.fill(0, this.low, this.high + 1);
    this.low = Infinity;
    this.high = -Infinity;
    this.total = 0;
  }
}

const kept = [
  new SketchAccumulator(),
  new SketchAccumulator(),
  new SketchAccumulator(),
  new SketchAccumulator(),
] as const;

/**
 * Four accumulators, empty, kept from one read to the next (a read takes those it needs): each
 * holds a count for every bin (512 KiB), which made anew for each read cost more than its
 * merging. Only for use between two awaits, so that no other read sees them half merged.
 */
export function keptAccumulators(): typeof kept {
  // Reset here too: a read that threw mid-merge left its counts behind.
  for (const accumulator of kept) accumulator.reset();
  return kept;
}

/**
 * SQL functions over sketches, on every connection that writes or reads the rollups:
 * sketch_merge(a, b) for the writer's upserts, the aggregates sketch_of(value) over rows and
 * sketch_sum(sketch) over cells for reads and migrations.
 */
export function registerSketchFunctions(db: Database): void {
  db.function('sketch_merge', { deterministic: true }, (a: unknown, b: unknown) =>
    mergeEncoded(a as Uint8Array | null, b as Uint8Array | null),
  );
  const finish = (bins: Bins | null) => (bins === null || bins.size === 0 ? null : encode(bins));
  db.aggregate('sketch_of', {
    start: () => null as Bins | null,
    step: (bins: Bins | null, value: unknown) => {
      if (value === null) return bins;
      const into = bins ?? new Map();
      addBin(into, binOf(value as number));
      return into;
    },
    result: finish,
  });
  db.aggregate('sketch_sum', {
    start: () => null as Bins | null,
    step: (bins: Bins | null, sketch: unknown) => {
      if (sketch === null) return bins;
      const into = bins ?? new Map();
      addEncoded(into, sketch as Uint8Array);
      return into;
    },
    result: finish,
  });
}
