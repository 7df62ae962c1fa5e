/** A small bounded LRU (Map keeps insertion order; a hit re-inserts the key). */
export class Lru<K, V> {
  readonly #map = new Map<K, V>();
  constructor(readonly capacity: number) {}

  get(key: K, make: () => V): V {
    const hit = this.#map.get(key);
    if (hit !== undefined) {
      this.#map.delete(key);
      this.#map.set(key, hit);
      return hit;
    }
    const value = make();
    this.#map.set(key, value);
    if (this.#map.size > this.capacity) this.#map.delete(this.#map.keys().next().value as K);
    return value;
  }

  get size(): number {
    return this.#map.size;
  }
}
