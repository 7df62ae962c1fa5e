// What the sandbox needs to serve an aggregate operation (stat.*, range.* records): how a record
// groups the facts of a cube, how it prints, its default order, its natural key (within one
// response the records are unique by these fields: the warehouse relies on them) and its
// call-count field (what ground-truth sums use). Each payload file declares its operations' entries.
import type { StatType } from "../../catalogue/stats.ts";
import type { Fact } from "../generate/facts.ts";
import type { ProjectWorld } from "../world.ts";

export interface AggregateOp {
  readonly type: StatType;
  /** Group key in index space; range.exception keeps one group per cube. */
  readonly group: (f: Fact, cube: number) => string;
  readonly print: (w: ProjectWorld, f: Fact) => Record<string, unknown>;
  /** Default sort column (descending). */
  readonly order: string;
  /** The fields a record is unique by within one response. */
  readonly key: readonly string[];
  /** The field that counts calls (or hits). */
  readonly count: string;
}
