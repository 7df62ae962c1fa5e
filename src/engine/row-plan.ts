// A stream's row builder, compiled once per stream (as the record fast lane is, schemas/record.ts):
// records of one answer share their keys, in one order, so the first record's keys make a plan:
// each key's column (or `extra`) decided once, and a row made as one object literal of straight
// property reads instead of a keyed store per field. A record with other keys, or keys in another
// order, is not the plan's: `build` returns undefined and the caller maps it the generic way
// (rows.ts toRow), whose result the plan's equals field for field and in key order.
import type { Row } from "../db/write/row.ts";

/** Builds a row from a record of the plan's keys; undefined for any other record. */
export type RowBuild = (record: Record<string, unknown>, before: object, after: object) => Row | undefined;

export interface RowPlanInputs {
  /** Record key -> column (null: the key goes to `extra`). */
  readonly columnOf: (key: string) => string | null;
  readonly derive: ((row: Readonly<Record<string, unknown>>) => Record<string, unknown>) | undefined;
  /** Whether the table has an `extra` column. */
  readonly hasExtra: boolean;
}

const plans = new WeakMap<object, RowBuild | null>();

/**
 * The row builder of `stream`, planned on `first` (the first record it maps); null when that
 * record cannot make a plan (two keys for one column). One plan per stream: a stream whose
 * records change shape maps the others the generic way.
 */
export function rowPlan(stream: object, first: Record<string, unknown>, inputs: RowPlanInputs): RowBuild | null {
  let plan = plans.get(stream);
  if (plan === undefined) {
    plan = compile(Object.keys(first), inputs);
    plans.set(stream, plan);
  }
  return plan;
}

function compile(keys: readonly string[], { columnOf, derive, hasExtra }: RowPlanInputs): RowBuild | null {
  const q = (text: string) => JSON.stringify(text);
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
  const row = { ${stored.join(", ")} };
  Object.assign(row, before);
  ${derive ? "Object.assign(row, derive(row));" : ""}
  Object.assign(row, after);
  ${hasExtra ? "row.extra = extra ?? own ?? {};" : ""}
  return row;
};`;
  return new Function("KEYS", "derive", source)(keys, derive) as RowBuild;
}
