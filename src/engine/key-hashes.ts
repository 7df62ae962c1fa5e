// The keys a leaf has written so far, for its duplicate check (window-rows.ts), in 8 bytes a key
// whatever the key: a 52-bit hash of each in an open-addressing table. A hash seen before only
// makes a key a candidate; the check confirms it exactly (against the batch in hand, and the rows
// already written), so a hash collision can never refuse a record. A Set of the keys' texts took
// about 60 bytes a key: 5 MB for one 80,000-record page, times the windows written at once.

/** 52-bit hash of a text (two 32-bit FNV-1a lanes with different offsets), never 0. */
export function keyHash(text: string): number {
  let a = 0x811c9dc5;
  let b = 0x01000193 ^ 0x5bd1e995;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x5bd1e995) ^ (b >>> 15);
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
