// A stream's row builder, compiled once per stream (as the record fast lane is, schemas/record.ts):
// records of one answer share their keys, in one order, so the first record's keys make a plan:
// each key's column (or `extra`) decided once, and a row made as one object literal of straight
// property reads instead of a keyed store per field. A record with other keys, or keys in another
// order, is not the plan's: `build` returns undefined and the caller maps it the generic way
// (rows.ts toRow), whose result the plan's equals field for field and in key order.
import type { Row } from "../db/write/row.ts";

/** A name as a quoted literal in the generated text. */
const q = (text: string) => JSON.stringify(text);

/** Builds a row from a record of the plan's keys; undefined for any other record. */
export type RowBuild = (record: Record<string, unknown>, before: object, after: object) => Row | undefined;

export interface RowPlanInputs {
  /** Record key -> column (null: the key goes to `extra`). */
  readonly columnOf: (key: string) => string | null;
  readonly derive: ((row: Readonly<Record<string, unknown>>) => Record<string, unknown>) | undefined;
  /** Whether the table has an `extra` column. */
  readonly hasExtra: boolean;
  /** The columns every row of the write shares (rows.ts): their keys are planned, not their values. */
  readonly before: object;
  readonly after: object;
}

/** A stream's plan: the record keys learned from its first record, and a builder per set of shared columns. */
interface Plan {
  readonly keys: readonly string[];
  readonly builds: Map<string, RowBuild | null>;
}

const plans = new WeakMap<object, Plan>();

/**
 * The row builder of `stream`, planned on `first` (the first record it maps); null when that
 * record cannot make a plan (two keys for one column). One plan per stream: a stream whose
 * records change shape maps the others the generic way. Without a derive, a builder is made per
 * set of keys of the shared columns (`before`, `after`: a few per stream), their values read per row.
 */
export function rowPlan(stream: object, first: Record<string, unknown>, inputs: RowPlanInputs): RowBuild | null {
  let plan = plans.get(stream);
  if (plan === undefined) {
    plan = { keys: Object.keys(first), builds: new Map() };
    plans.set(stream, plan);
  }
  // With a derive the shared columns are assigned, not planned: one builder serves them all.
  const shared = inputs.derive ? "" : `${Object.keys(inputs.before).join("\u0000")}\u0001${Object.keys(inputs.after).join("\u0000")}`;
  let build = plan.builds.get(shared);
  if (build === undefined) {
    build = compile(plan.keys, inputs);
    plan.builds.set(shared, build);
  }
  return build;
}

function compile(keys: readonly string[], { columnOf, derive, hasExtra, before, after }: RowPlanInputs): RowBuild | null {
  const stored: string[] = [];
  const toExtra: string[] = [];
  const columns = new Set<string>();
  for (const [i, key] of keys.entries()) {
    if (key === "extra") continue;
    const column = columnOf(key);
    if (column === null) toExtra.push(`if (v${i} !== null && v${i} !== undefined) { extra ??= { ...own }; extra[${q(key)}] = v${i}; }`);
    // Two keys for one column (the later value at the first one's place), or a name a literal
    // would read as the prototype: the generic way.
    else if (columns.has(column) || column === "__proto__") return null;
    else {
      columns.add(column);
      stored.push(`${q(column)}: v${i}`);
    }
  }
  const shared = derive
    ? []
    : [...Object.keys(before).map((k) => ["before", k] as const), ...Object.keys(after).map((k) => ["after", k] as const)];
  // A literal's "__proto__" key would set the prototype: the generic way.
  if (shared.some(([, k]) => k === "__proto__")) return null;
  // The record's keys, checked in order: pointer compares of internalized strings, no lookups.
  const reads = keys.map((key, i) => `const v${i} = record[${q(key)}];`);
  const source = `"use strict";
return function buildRow(record, before, after) {
  let n = 0;
  for (const key in record) if (n >= KEYS.length || key !== KEYS[n++]) return undefined;
  if (n !== KEYS.length) return undefined;
  ${reads.join("\n  ")}
  const own = record.extra;
  let extra = null;
  ${toExtra.join("\n  ")}
  ${derive ? derived(stored, hasExtra) : literal(stored, shared, hasExtra)}
  return row;
};`;
  return new Function("KEYS", "derive", source)(keys, derive) as RowBuild;
}

/**
 * Without a derive, the row is one object literal: the record's columns, then the shared ones read
 * from `before` and `after` (a key repeated keeps its first place and takes its last value, as
 * Object.assign would), then `extra`. Properties added after the literal (Object.assign) grew a
 * second store per row, a twentieth of what a backfill allocated.
 */
function literal(stored: readonly string[], shared: readonly (readonly [string, string])[], hasExtra: boolean): string {
  const reads = shared.map(([from, k]) => `${q(k)}: ${from}[${q(k)}]`);
  return `const row = { ${[...stored, ...reads, ...(hasExtra ? ["extra: extra ?? own ?? {}"] : [])].join(", ")} };`;
}

/** With a derive, which reads the row so far: the shared columns are assigned around it, in order. */
function derived(stored: readonly string[], hasExtra: boolean): string {
  return `const row = { ${stored.join(", ")} };
  Object.assign(row, before);
  Object.assign(row, derive(row));
  Object.assign(row, after);
  ${hasExtra ? "row.extra = extra ?? own ?? {};" : ""}`;
}
