// Seeded, fast and portable randomness: every generated value is a pure function of its inputs
// (seed, pcode, 5-minute cube, data type), so any cube can be rebuilt at any time in any order.

const GOLDEN = 0x9e3779b9;
const TWO32 = 4294967296;

/** murmur3 finaliser: a bijection on uint32, used both for mixing and for collision-free hashes. */
export function fmix32(x: number): number {
  let h = x >>> 0;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** FNV-1a of a string (uint32). */
export function fnv1a(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** Combines numbers (any non-negative safe integer: epoch ms, pcodes beyond 2^32) and strings into one uint32. */
export function mix(...parts: readonly (number | string)[]): number {
  let h = GOLDEN;
  for (const part of parts) {
    if (typeof part === "string") h = fmix32(h ^ fnv1a(part)) + GOLDEN;
    else {
      const lo = (part % TWO32) >>> 0;
      const hi = Math.floor(part / TWO32) >>> 0;
      h = fmix32(h ^ lo) + GOLDEN;
      h = fmix32(h ^ hi) + GOLDEN;
    }
  }
  return fmix32(h);
}

export type Rng = () => number;

/** mulberry32: uniform [0, 1). */
export function mulberry32(seed: number): Rng {
  let a = seed | 0;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / TWO32;
  };
}

export function rngOf(...parts: readonly (number | string)[]): Rng {
  return mulberry32(mix(...parts));
}

/** Integer in [lo, hi] inclusive. */
export function intIn(rng: Rng, lo: number, hi: number): number {
  return lo + Math.floor(rng() * (hi - lo + 1));
}

export function pick<T>(rng: Rng, items: readonly T[]): T {
  return items[Math.floor(rng() * items.length)]!;
}

/** Signed 32-bit value (hashes and oids of the real API are Java ints, negative ones are normal). */
export function signed32(x: number): number {
  return x | 0;
}

/** A collision-free signed hash for index `i` of a key family (fmix32 is a bijection). */
export function keyHash(family: string, i: number): number {
  return signed32(fmix32((fnv1a(family) + i) >>> 0));
}

/** A decimal string of a 63-bit positive number (snapSeq and errorSnapId exceed 2^53). */
export function bigDecimalString(rng: Rng): string {
  const hi = BigInt(Math.floor(rng() * 0x7fffffff) + 1);
  const lo = BigInt(Math.floor(rng() * TWO32));
  return ((hi << 32n) | lo).toString();
}

/** 32 lower-case hex digits (event uuid). */
export function hex128(...parts: readonly (number | string)[]): string {
  let out = "";
  for (let i = 0; i < 4; i++)
    out += mix(...parts, i)
      .toString(16)
      .padStart(8, "0");
  return out;
}

/** Partial Fisher-Yates: `n` distinct indices from [0, size). */
export function sampleIndices(rng: Rng, size: number, n: number): number[] {
  const pool = Array.from({ length: size }, (_, i) => i);
  const count = Math.min(n, size);
  for (let i = 0; i < count; i++) {
    const j = i + Math.floor(rng() * (size - i));
    const tmp = pool[i]!;
    pool[i] = pool[j]!;
    pool[j] = tmp;
  }
  return pool.slice(0, count);
}
