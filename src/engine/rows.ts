// Parsed records -> rows of the stream's table. Generic: the catalogue entry declares renames,
// constants and derived columns; keys the table has no column for go to `extra`, never dropped.

import { isAccountStream } from "../catalogue/types.ts";
import { type TableInfo, tableInfo } from "../db/tables.ts";
import type { Row } from "../db/write/row.ts";
import { parentColumns } from "./fan-out.ts";
import { rowPlan } from "./row-plan.ts";
import type { Target } from "./types.ts";

/** Where the rows of one write belong. */
export interface RowContext {
  readonly runId: number | null;
  /** For windowed tables: the (sub-)window the records were fetched for. */
  readonly windowStart?: number;
  readonly windowEnd?: number;
  /** For snapshot tables: the capture's time (when its answer arrived). */
  readonly capturedAt?: number;
}

export function toRows(target: Target, records: readonly unknown[], ctx: RowContext): Row[] {
  const info = tableInfo(target.stream.table);
  const { before, after } = sharedColumns(target, info, ctx);
  const columnOf = columnPlan(target, info);
  const out: Row[] = new Array(records.length);
  const first = records[0];
  const build =
    typeof first === "object" && first !== null
      ? rowPlan(target.stream, first as Record<string, unknown>, {
          columnOf,
          derive: target.stream.derive,
          hasExtra: info.types.has("extra"),
          before,
          after,
        })
      : null;
  for (let i = 0; i < records.length; i++) {
    const record = records[i] as Record<string, unknown>;
    out[i] = build?.(record, before, after) ?? toRow(target, info, record, columnOf, before, after);
  }
  return out;
}

/**
 * Columns with the same value on every row of one write, computed once per write: `before` the
 * stream's derive (constants, request inputs), `after` it (project, partition, window, capture, run).
 * Times stay epoch ms: the writers encode them (no Date per row).
 */
function sharedColumns(
  target: Target,
  info: TableInfo,
  ctx: RowContext,
): { before: Record<string, unknown>; after: Record<string, unknown> } {
  const { stream } = target;
  const before = targetScope(target);
  const after: Record<string, unknown> = {};
  // Project-level operations: the project is the one asked for (a record's own pcode can be "7").
  if (!isAccountStream(target.op) && info.types.has("pcode")) after.pcode = target.pcode;
  Object.assign(after, parentColumns(stream, target.partition));
  if (ctx.windowStart !== undefined && info.types.has("window_start")) {
    after.window_start = ctx.windowStart;
    after.window_end = ctx.windowEnd!;
  }
  if (ctx.capturedAt !== undefined && info.types.has("captured_at")) after.captured_at = ctx.capturedAt;
  if (info.types.has("run_id")) after.run_id = ctx.runId;
  return { before, after };
}

/** Record key -> table column (null: the key goes to `extra`), learned once per key and stream. */
type ColumnPlan = (key: string) => string | null;

const plans = new WeakMap<object, Map<string, string | null>>();

function columnPlan(target: Target, info: TableInfo): ColumnPlan {
  let plan = plans.get(target.stream);
  if (!plan) {
    plan = new Map();
    plans.set(target.stream, plan);
  }
  const known = plan;
  return (key) => {
    let column = known.get(key);
    if (column === undefined) {
      const name = target.stream.rename?.[key] ?? key;
      column = info.writable.includes(name) ? name : null;
      known.set(key, column);
    }
    return column;
  };
}

/** A record's row, the generic way (rows of another shape than the stream's plan, row-plan.ts). */
function toRow(target: Target, info: TableInfo, record: Record<string, unknown>, columnOf: ColumnPlan, before: object, after: object): Row {
  const row: Record<string, unknown> = {};
  const own = record.extra as Record<string, unknown> | undefined;
  let extra: Record<string, unknown> | null = null;
  for (const key in record) {
    if (key === "extra") continue;
    const value = record[key];
    const column = columnOf(key);
    if (column !== null) row[column] = value;
    else if (value !== null && value !== undefined) {
      extra ??= { ...own };
      extra[key] = value;
    }
  }
  Object.assign(row, before);
  if (target.stream.derive) Object.assign(row, target.stream.derive(row));
  Object.assign(row, after);
  if (info.types.has("extra")) row.extra = extra ?? own ?? {};
  return row;
}

/**
 * The columns every row of a target shares, which tell its rows apart from another partition's:
 * the stream's constants and its partition's inputs (an aggregate's replace deletes by them).
 */
export function targetScope(target: Target): Record<string, string | number> {
  return { ...target.stream.constants, ...paramValues(target) };
}

/** The request inputs a stream writes to columns (e.g. the host/port filter of its partition). */
export function paramValues(target: Target): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [param, column] of Object.entries(target.stream.paramColumns ?? {})) {
    const v = target.params[param];
    if (v !== undefined) out[column] = Array.isArray(v) ? v.join(",") : String(v);
  }
  return out;
}

/** Rows whose natural key repeats an earlier row's go to `duplicates`; the first one stays. */
export function splitDuplicates(rows: readonly Row[], key: readonly string[]): { unique: Row[]; duplicates: Row[] } {
  const seen = new Set<string>();
  const unique: Row[] = [];
  const duplicates: Row[] = [];
  for (const row of rows) {
    const k = key.length === 1 ? keyPart(row[key[0]!]) : key.map((c) => keyPart(row[c])).join("\u0000");
    if (seen.has(k)) duplicates.push(row);
    else {
      seen.add(k);
      unique.push(row);
    }
  }
  return { unique, duplicates };
}

function keyPart(v: unknown): string {
  return v instanceof Date ? String(v.getTime()) : String(v);
}
