/**
 * Seeded randomness for the demo data. sfc32 (Chris Doty-Humphrey's Small Fast Counting
 * generator, 128-bit state) seeded through splitmix32: tiny, fast, well studied, and the
 * same sequence on every platform, which `Math.random` is not.
 */
export class Random {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  constructor(seed: number) {
    let s = seed >>> 0;
    const next = () => {
      s = (s + 0x9e3779b9) >>> 0;
      return mix32(s);
    };
    this.a = next();
    this.b = next();
    this.c = next();
    this.d = next();
    // The first outputs of a freshly seeded sfc32 are weakly mixed.
    for (let i = 0; i < 12; i++) this.uint32();
  }

  uint32(): number {
    const t = (((this.a + this.b) | 0) + this.d) | 0;
    this.d = (this.d + 1) | 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) | 0;
    this.c = (this.c << 21) | (this.c >>> 11);
    this.c = (this.c + t) | 0;
    return t >>> 0;
  }

  /** Uniform in [0, 1). */
  next(): number {
    return this.uint32() / 4294967296;
  }

  chance(probability: number): boolean {
    return this.next() < probability;
  }

  /** Integer in [min, max]. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  between(min: number, max: number): number {
    return min + this.next() * (max - min);
  }

  pick<T>(items: readonly T[]): T {
    const item = items[Math.floor(this.next() * items.length)];
    if (item === undefined) throw new Error('pick from an empty list');
    return item;
  }

  /** Standard normal (Box-Muller; the second value is dropped to keep the stream simple). */
  normal(): number {
    const u = 1 - this.next();
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * this.next());
  }

  /** Log-normal with the given median: token counts and latencies have long right tails. */
  logNormal(median: number, sigma: number): number {
    return median * Math.exp(sigma * this.normal());
  }

  /** `chars` lowercase hex digits, a multiple of 8. */
  hex(chars: number): string {
    let out = '';
    for (let i = 0; i < chars; i += 8) out += hex8(this.uint32());
    return out;
  }
}

const BYTE_HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));

/** A 32-bit integer as 8 hex digits; by table, as ids are made for every row. */
export function hex8(value: number): string {
  return (
    BYTE_HEX[value >>> 24]! + BYTE_HEX[(value >>> 16) & 255]! + BYTE_HEX[(value >>> 8) & 255]! + BYTE_HEX[value & 255]!
  );
}

/** murmur3's finaliser: a bijection on 32-bit integers, so distinct inputs never collide. */
export function mix32(value: number): number {
  let h = value >>> 0;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** A stateless uniform in [0, 1) for (seed, n): lets two passes over the calendar agree. */
export function unitHash(seed: number, n: number): number {
  return mix32(mix32(seed ^ 0x5bd1e995) ^ mix32(n)) / 4294967296;
}

/** Index chosen in proportion to `weights` (all >= 0, at least one > 0). */
export function weightedIndex(random: Random, weights: readonly number[], total: number): number {
  let target = random.next() * total;
  for (let i = 0; i < weights.length; i++) {
    target -= weights[i] ?? 0;
    if (target < 0) return i;
  }
  for (let i = weights.length - 1; i >= 0; i--) if ((weights[i] ?? 0) > 0) return i;
  throw new Error('no positive weight');
}
