/**
 * A least-recently-used cache bounded by the total weight of what it holds, not by its number of
 * entries: the sandbox's cube facts range from a handful per quiet cube to tens of thousands in a
 * burst cube, so a bound in entries is no bound on memory. A value heavier than the whole bound is
 * handed back without being kept. (Map keeps insertion order; a hit re-inserts the key.)
 */
export class WeightedLru<K, V> {
  readonly #map = new Map<K, { readonly value: V; readonly weight: number }>();
  #weight = 0;
  constructor(
    readonly maxWeight: number,
    readonly weigh: (value: V) => number,
  ) {
    if (!(maxWeight >= 0)) throw new RangeError(`maxWeight must be 0 or more, got ${maxWeight}`);
  }

  get(key: K, make: () => V): V {
    const hit = this.#map.get(key);
    if (hit !== undefined) {
      this.#map.delete(key);
      this.#map.set(key, hit);
      return hit.value;
    }
    const value = make();
    const weight = this.weigh(value);
    if (weight > this.maxWeight) return value;
    this.#map.set(key, { value, weight });
    this.#weight += weight;
    for (const [oldest, entry] of this.#map) {
      if (this.#weight <= this.maxWeight) break;
      this.#map.delete(oldest);
      this.#weight -= entry.weight;
    }
    return value;
  }

  /** Entries held. */
  get size(): number {
    return this.#map.size;
  }

  /** Total weight held; never above maxWeight. */
  get weight(): number {
    return this.#weight;
  }
}
