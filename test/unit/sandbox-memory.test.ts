// The sandbox's memory is bounded by design: its cube-fact cache holds at most its bound in facts,
// whatever windows it serves (a month of them, burst cubes included), and what it dropped is
// generated again identically. A bound in entries was no bound: one burst cube holds 12,000 facts,
// a quiet one a handful, and `simulate` died of heap exhaustion a few weeks into a backfill.
import { describe, expect, it } from "vitest";
import { STAT_TYPES } from "../../src/catalogue/stats.ts";
import { fullRecords } from "../../src/sandbox/aggregate.ts";
import { DEFAULT_CACHE_FACTS, FactCache } from "../../src/sandbox/generate/facts.ts";
import { CUBE_MS } from "../../src/sandbox/grid.ts";
import { WeightedLru } from "../../src/sandbox/lru.ts";
import { buildWorld, burstCubeOf } from "../../src/sandbox/world.ts";

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const T0 = Date.UTC(2026, 0, 5);
const cubesOf = (start: number, end: number) => Array.from({ length: (end - start) / CUBE_MS }, (_, i) => start + i * CUBE_MS);

describe("WeightedLru", () => {
  it("never holds more than its bound, drops the least recently used first, keeps nothing heavier than the bound", () => {
    const lru = new WeightedLru<number, number>(100, (v) => v);
    for (let k = 0; k < 500; k++) {
      lru.get(k, () => 1 + ((k * 37) % 40));
      expect(lru.weight).toBeLessThanOrEqual(100);
    }
    const fresh = new WeightedLru<string, number>(10, (v) => v);
    fresh.get("a", () => 4);
    fresh.get("b", () => 4);
    fresh.get("a", () => -1); // a hit: "a" is now the most recent
    fresh.get("c", () => 4); // 12 > 10: "b" goes, not "a"
    let made = 0;
    expect(fresh.get("a", () => ++made)).toBe(4);
    fresh.get("b", () => ++made);
    expect(made).toBe(1);
    expect(fresh.get("huge", () => 11)).toBe(11);
    expect(fresh.weight).toBeLessThanOrEqual(10);
    expect(fresh.size).toBeLessThanOrEqual(3);
  });
});

describe("the cube-fact cache", () => {
  const worlds = [0, 1, 2].map((i) => buildWorld(1, i, 12_000, `t${i}`));

  it("holds at most its bound after serving 2 days of every type of 3 projects, burst cubes included", () => {
    const bound = 30_000;
    const cache = new FactCache(bound);
    let peak = 0;
    let served = 0;
    // Cube by cube, as fullRecords asks for them (a window is its cubes).
    for (const cube of cubesOf(T0, T0 + 2 * DAY))
      for (const w of worlds)
        for (const type of STAT_TYPES) {
          served += cache.facts(type, w, cube).length;
          peak = Math.max(peak, cache.weight);
        }
    expect(peak).toBeLessThanOrEqual(bound);
    // It was in use, not empty: the bound was reached.
    expect(peak).toBeGreaterThan(bound / 2);
    // The bursts alone (12,000 facts per type and project-day) are far more than the bound.
    expect(served).toBeGreaterThan(2 * 3 * 5 * 12_000);
  }, 60_000);

  it("a window served after its cubes were dropped is the same as from a cache that kept everything", () => {
    const small = new FactCache(2_000);
    const large = new FactCache(Number.MAX_SAFE_INTEGER);
    const w = worlds[1]!;
    const burst = burstCubeOf(w, T0 + DAY);
    const hour = Math.floor(burst / HOUR) * HOUR;
    const cubes = cubesOf(hour, hour + HOUR);
    const first = fullRecords(small, w, "stat.sql", cubes);
    // Other days push the burst hour out of the small cache.
    for (let d = 2; d < 4; d++) fullRecords(small, w, "stat.sql", cubesOf(T0 + d * DAY, T0 + d * DAY + HOUR));
    expect(fullRecords(small, w, "stat.sql", cubes)).toEqual(first);
    expect(fullRecords(large, w, "stat.sql", cubes)).toEqual(first);
    expect(first.length).toBeGreaterThan(12_000);
  }, 60_000);

  it("the default bound is the sandbox's: a few hundred thousand facts, not a month of them", () => {
    expect(new FactCache().maxWeight).toBe(DEFAULT_CACHE_FACTS);
    // A month of 3 projects holds ~30 M facts (bursts 5 x 12,000 a project-day): the bound is far below.
    expect(DEFAULT_CACHE_FACTS).toBeLessThan(3 * 30 * 5 * 12_000);
  });
});
