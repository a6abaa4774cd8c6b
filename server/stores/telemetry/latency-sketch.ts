import type { Database } from 'better-sqlite3';

/**
 * Mergeable latency sketches for the rollups (DDSketch's log-scale bins, Masson et al., VLDB
 * 2019): a value x > 0 falls in bin i = ceil(log_γ x), which holds (γ^(i-1), γ^i], and any
 * quantile read back as the bin's middle 2γ^i / (γ + 1) is within RELATIVE_ERROR of the
 * value at that rank. Bins add up, so the sketches of two cells merge into the sketch of their
 * union exactly: rollup cells of any grain and the rows at a window's edges combine without
 * losing the bound, which a stored percentile could never do.
 *
 * Stored as a BLOB of (int16 bin, uint32 count) pairs in bin order, little-endian; values of
 * 0 or less share the bin ZERO_BIN and read back as 0.
 */

export const RELATIVE_ERROR = 0.01;
const GAMMA = (1 + RELATIVE_ERROR) / (1 - RELATIVE_ERROR);
const LN_GAMMA = Math.log(GAMMA);
const ZERO_BIN = -32_768;
const MAX_BIN = 32_767;
const PAIR_BYTES = 6;

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

export function encode(bins: Bins): Buffer {
  const sorted = [...bins.keys()].sort((a, b) => a - b);
  const out = Buffer.allocUnsafe(sorted.length * PAIR_BYTES);
  sorted.forEach((bin, index) => {
    out.writeInt16LE(bin, index * PAIR_BYTES);
    out.writeUInt32LE(bins.get(bin)!, index * PAIR_BYTES + 2);
  });
  return out;
}

/** Adds a stored sketch's bins to `bins`. */
export function addEncoded(bins: Bins, sketch: Uint8Array): void {
  const view = Buffer.from(sketch.buffer, sketch.byteOffset, sketch.byteLength);
  for (let at = 0; at + PAIR_BYTES <= view.length; at += PAIR_BYTES) {
    addBin(bins, view.readInt16LE(at), view.readUInt32LE(at + 2));
  }
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
    const view = new DataView(sketch.buffer, sketch.byteOffset, sketch.byteLength);
    for (let at = 0; at + PAIR_BYTES <= sketch.byteLength; at += PAIR_BYTES) {
      const slot = view.getInt16(at, true) - ZERO_BIN;
      const count = view.getUint32(at + 2, true);
      this.counts[slot]! += count;
      this.total += count;
      if (slot < this.low) this.low = slot;
      if (slot > this.high) this.high = slot;
    }
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
