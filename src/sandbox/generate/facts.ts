// Cube facts: what one 5-minute cube holds per key, as plain numbers (names are resolved only
// when a record is printed). Windows are merges of cubes: sums, min of mins, max of maxes.
import type { StatType } from "../../catalogue/stats.ts";
import { WeightedLru } from "../lru.ts";
import type { ProjectWorld } from "../world.ts";
import { errorFacts } from "./error.ts";
import { httpcFacts } from "./httpc.ts";
import type { Fact } from "./measures.ts";
import { remoteFacts } from "./remote.ts";
import { sqlFacts } from "./sql.ts";
import { transactionFacts } from "./transaction.ts";

/** Key fields and measures of one cube (or of a merge of cubes), all numbers. */
export type { Fact } from "./measures.ts";

interface MergeSpec {
  readonly min: readonly string[];
  readonly max: readonly string[];
  /** Bit sets (agents that raised an error). */
  readonly or: readonly string[];
  /** Everything else that is not a key field is summed. */
  readonly keys: readonly string[];
}

export const MERGE: Record<StatType, MergeSpec> = {
  transaction: { keys: ["svc"], min: ["timeMin"], max: ["timeMax"], or: [] },
  sql: { keys: ["sql", "dbc", "svc"], min: ["timeMin"], max: ["timeMax"], or: [] },
  httpc: { keys: ["url", "host", "svc"], min: ["timeMin"], max: ["timeMax"], or: [] },
  error: { keys: ["cls", "msg", "svc"], min: [], max: ["time"], or: ["agents"] },
  remote: { keys: ["ip"], min: [], max: [], or: [] },
};

const GENERATORS: Record<StatType, (w: ProjectWorld, cube: number) => Fact[]> = {
  transaction: transactionFacts,
  sql: sqlFacts,
  httpc: httpcFacts,
  error: errorFacts,
  remote: remoteFacts,
};

/** Merges `f` into `acc` (mutates `acc`, never `f`: cached cube facts stay intact). */
export function mergeInto(type: StatType, acc: Fact, f: Fact): void {
  const spec = MERGE[type];
  for (const field in f) {
    const v = f[field]!;
    if (spec.keys.includes(field)) continue;
    if (spec.min.includes(field)) acc[field] = Math.min(acc[field]!, v);
    else if (spec.max.includes(field)) acc[field] = Math.max(acc[field]!, v);
    else if (spec.or.includes(field)) acc[field] = acc[field]! | v;
    else acc[field] = acc[field]! + v;
  }
}

/**
 * Facts kept by default: about 26 MiB of heap (~135 bytes a fact, measured), some hours of every
 * type of 3 projects, burst cubes included. The old bound of 8192 entries held 760,000 facts
 * (97 MiB) after 2 days of 3 projects. What falls out is generated again (a project-day of one
 * type takes ~30 ms), so the bound costs CPU on re-reads, never memory.
 */
export const DEFAULT_CACHE_FACTS = 200_000;

/** Cube facts by (project, type, cube), bounded by the number of facts held (lru.ts). */
export class FactCache {
  readonly #lru: WeightedLru<string, Fact[]>;
  constructor(maxFacts = DEFAULT_CACHE_FACTS) {
    // Each cube weighs its facts plus one, so that empty cubes count too.
    this.#lru = new WeightedLru(maxFacts, (facts) => facts.length + 1);
  }

  facts(type: StatType, w: ProjectWorld, cube: number): Fact[] {
    return this.#lru.get(`${w.pcode}|${type}|${cube}`, () => GENERATORS[type](w, cube));
  }

  /** Facts (plus one per cube) held now; never above the bound. */
  get weight(): number {
    return this.#lru.weight;
  }

  get maxWeight(): number {
    return this.#lru.maxWeight;
  }
}
