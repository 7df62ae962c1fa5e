// The keys a leaf has written so far, for its duplicate check (window-rows.ts), in 8 bytes a key
// whatever the key: a 52-bit hash of each in an open-addressing table. A hash seen before only
// makes a key a candidate; the check confirms it exactly (against the batch in hand, and the rows
// already written), so a hash collision can never refuse a record. A Set of the keys' texts took
// about 60 bytes a key: 5 MB for one 80,000-record page, times the windows written at once.

import type { Row } from "../db/write/row.ts";

const A0 = 0x811c9dc5;
const B0 = 0x01000193 ^ 0x5bd1e995;
const PA = 0x01000193;
const PB = 0x5bd1e995;

/** A record key as one text: the same for a row in hand and the row read back from the table. */
export function keyText(row: Row, key: readonly string[]): string {
  return key.length === 1 ? keyPart(row[key[0]!]) : key.map((c) => keyPart(row[c])).join("\u0000");
}

function keyPart(v: unknown): string {
  if (v instanceof Date) return String(v.getTime());
  // A time read back from the table, or in hand as epoch ms: the same instant, the same text.
  return v === null || v === undefined ? "\u0001null" : String(v);
}

/** The decimal digits of a safe integer, least significant first (reused: hashes are made one at a time). */
const DIGITS = new Uint8Array(16);

/**
 * The hash of keyText(row, key), without making the text: a safe integer's digits are hashed as
 * String() writes them ("-" before a negative, "0" for -0), other values by their text. Every
 * keyed row of a leaf is hashed; its text is made only where its hash was seen before.
 */
export function keyHashOf(row: Row, key: readonly string[]): number {
  // 52 bits from two 32-bit FNV-1a lanes with different offsets, over the text's UTF-16 codes; never 0.
  let a = A0;
  let b = B0;
  for (let k = 0; k < key.length; k++) {
    if (k > 0) {
      a = Math.imul(a, PA);
      b = Math.imul(b, PB) ^ (b >>> 15);
    }
    const v = row[key[k]!];
    if (typeof v === "number" && Number.isSafeInteger(v)) {
      const n = v < 0 ? -v : v;
      if (v < 0) {
        a = Math.imul(a ^ 45, PA);
        b = Math.imul(b ^ 45, PB) ^ (b >>> 15);
      }
      // Digits from two int32 halves, by integer division: with a double's division by 10 the whole
      // duplicate check took longer than making the texts (0.92 against 0.66 us a row, docs/benchmarks.md).
      // n / 1e8 never rounds up to the next integer below 2^53 (its fraction is at least 1e-8 short
      // of it, more than half a double's step there), so `low` is n's last 8 digits.
      const high = Math.floor(n / 1e8);
      let low = n - high * 1e8;
      let length = 0;
      do {
        const q = (low / 10) | 0;
        DIGITS[length++] = low - q * 10;
        low = q;
      } while (low > 0 || (high > 0 && length < 8));
      for (let h = high; h > 0; ) {
        const q = (h / 10) | 0;
        DIGITS[length++] = h - q * 10;
        h = q;
      }
      while (length > 0) {
        const c = 48 + DIGITS[--length]!;
        a = Math.imul(a ^ c, PA);
        b = Math.imul(b ^ c, PB) ^ (b >>> 15);
      }
    } else {
      const text = keyPart(v);
      for (let i = 0; i < text.length; i++) {
        const c = text.charCodeAt(i);
        a = Math.imul(a ^ c, PA);
        b = Math.imul(b ^ c, PB) ^ (b >>> 15);
      }
    }
  }
  return (a >>> 0) * 2 ** 20 + ((b >>> 12) & 0xfffff) + 1;
}

/** A set of key hashes (see the header). */
export class KeyHashes {
  #slots = new Float64Array(1024);
  #size = 0;

  /** Adds `hash`; false when it was there already (the key is a candidate duplicate). */
  add(hash: number): boolean {
    if ((this.#size + 1) * 2 > this.#slots.length) this.#grow();
    const at = this.#find(this.#slots, hash);
    if (this.#slots[at] === hash) return false;
    this.#slots[at] = hash;
    this.#size++;
    return true;
  }

  get size(): number {
    return this.#size;
  }

  #find(slots: Float64Array, hash: number): number {
    const mask = slots.length - 1;
    let i = (hash % slots.length) & mask;
    while (slots[i] !== 0 && slots[i] !== hash) i = (i + 1) & mask;
    return i;
  }

  #grow(): void {
    const old = this.#slots;
    this.#slots = new Float64Array(old.length * 2);
    for (const h of old) if (h !== 0) this.#slots[this.#find(this.#slots, h)] = h;
  }
}
