// The duplicate check's key hash (src/engine/key-hashes.ts) is made from a row's key values
// without making the key's text: it must be the hash of that text, for every kind of value, or a
// repeated key could hash apart from its first and pass the check (then fail its window's COPY).
import { describe, expect, it } from "vitest";
import { KeyHashes, keyHashOf, keyText } from "../../src/engine/key-hashes.ts";

/** The hash as specified: two 32-bit FNV-1a lanes over the text's UTF-16 codes, 52 bits, never 0. */
function textHash(text: string): number {
  let a = 0x811c9dc5;
  let b = 0x01000193 ^ 0x5bd1e995;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x5bd1e995) ^ (b >>> 15);
  }
  return (a >>> 0) * 2 ** 20 + ((b >>> 12) & 0xfffff) + 1;
}

const EDGES: unknown[] = [
  0,
  -0,
  1,
  -1,
  9,
  10,
  -10,
  99_999_999,
  100_000_000,
  100_000_001,
  -100_000_000,
  1_000_000_000_000_007,
  9_007_199_199_999_999,
  8_999_999_999_999_999 - 7,
  Number.MAX_SAFE_INTEGER,
  Number.MIN_SAFE_INTEGER,
  2 ** 53,
  -(2 ** 53),
  1e21,
  1.5,
  -0.25,
  Number.NaN,
  Number.POSITIVE_INFINITY,
  123n,
  -(2n ** 63n),
  "",
  "5",
  "-0",
  "ünïcødé ✓ 日本語",
  "\u0000",
  null,
  undefined,
  true,
  new Date(Date.UTC(2025, 0, 14, 14)),
];

/** A random value of the kinds a key column holds (a seeded generator: the same values each run). */
function values(count: number): unknown[] {
  let seed = 42;
  const next = () => {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    return seed / 2 ** 32;
  };
  return Array.from({ length: count }, () => {
    const kind = Math.floor(next() * 5);
    const magnitude = 10 ** Math.floor(next() * 17);
    if (kind === 0) return Math.floor(next() * magnitude);
    if (kind === 1) return -Math.floor(next() * magnitude);
    if (kind === 2) return next() * magnitude;
    if (kind === 3) return String(Math.floor(next() * magnitude));
    return null;
  });
}

describe("keyHashOf", () => {
  it("is the hash of the key's text for one column, every kind of value", () => {
    for (const v of [...EDGES, ...values(5000)]) {
      const row = { k: v };
      expect(keyHashOf(row, ["k"]), `${String(v)}`).toBe(textHash(keyText(row, ["k"])));
    }
  });

  it("is the hash of the key's text for several columns, separators included", () => {
    const pool = [...EDGES, ...values(3000)];
    for (let i = 0; i + 2 < pool.length; i++) {
      const row = { a: pool[i], b: pool[i + 1], c: pool[i + 2] };
      expect(keyHashOf(row, ["a", "b", "c"])).toBe(textHash(keyText(row, ["a", "b", "c"])));
    }
  });

  it("hashes alike a key given as a number and as the same digits in a string (one text, one key)", () => {
    expect(keyHashOf({ a: 42, b: -7 }, ["a", "b"])).toBe(keyHashOf({ a: "42", b: "-7" }, ["a", "b"]));
    expect(keyHashOf({ a: 42, b: -7 }, ["a", "b"])).not.toBe(keyHashOf({ a: 427, b: null }, ["a", "b"]));
  });
});

describe("KeyHashes", () => {
  it("says a hash is new once, across growth of its table", () => {
    const hashes = new KeyHashes();
    const all = Array.from({ length: 5000 }, (_, k) => keyHashOf({ k }, ["k"]));
    expect(all.every((h) => hashes.add(h))).toBe(true);
    expect(all.some((h) => hashes.add(h))).toBe(false);
    expect(hashes.size).toBe(5000);
  });
});
