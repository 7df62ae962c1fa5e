// Parsed records -> rows of the stream's table. Generic: the catalogue entry declares renames,
// constants and derived columns; keys the table has no column for go to `extra`, never dropped.
import type { Row } from "../db/rowsJson.ts";
import { type TableInfo, tableInfo } from "../db/tables.ts";
import type { Target } from "./types.ts";

/** Where the rows of one write belong. */
export interface RowContext {
  readonly runId: number | null;
  /** For windowed tables: the (sub-)window the records were fetched for. */
  readonly windowStart?: number;
  readonly windowEnd?: number;
  /** For snapshot tables: the capture time of this run. */
  readonly capturedAt?: number;
}

// Managed by the writer (upsert / soft delete / defaults), never taken from a record.
const MANAGED = new Set(["synced_at", "first_seen_at", "last_seen_at", "deleted_at"]);

/** Columns the engine writes for a table (every column but the managed ones). */
export function writableColumns(info: TableInfo): string[] {
  return [...info.types.keys()].filter((c) => !MANAGED.has(c));
}

export function toRows(target: Target, records: readonly unknown[], ctx: RowContext): Row[] {
  const info = tableInfo(target.stream.table);
  const { before, after } = sharedColumns(target, info, ctx);
  return records.map((r) => toRow(target, info, r as Record<string, unknown>, before, after));
}

/**
 * Columns with the same value on every row of one write, computed once per write: `before` the
 * stream's derive (constants, request inputs), `after` it (project, partition, window, capture, run).
 */
function sharedColumns(
  target: Target,
  info: TableInfo,
  ctx: RowContext,
): { before: Record<string, unknown>; after: Record<string, unknown> } {
  const { stream } = target;
  const before = { ...stream.constants, ...paramValues(target) };
  const after: Record<string, unknown> = {};
  // Project-level operations: the project is the one asked for (a record's own pcode can be "7").
  if (target.op.sendsPcode && info.types.has("pcode")) after.pcode = target.pcode;
  if (stream.fanOut === "project") after.pcode = Number(target.partition);
  if (stream.fanOut === "group") after.group_key = target.partition;
  if (ctx.windowStart !== undefined && info.types.has("window_start")) {
    after.window_start = new Date(ctx.windowStart);
    after.window_end = new Date(ctx.windowEnd!);
  }
  if (ctx.capturedAt !== undefined && info.types.has("captured_at")) after.captured_at = new Date(ctx.capturedAt);
  if (info.types.has("run_id")) after.run_id = ctx.runId;
  return { before, after };
}

function toRow(target: Target, info: TableInfo, record: Record<string, unknown>, before: object, after: object): Row {
  const { stream } = target;
  const row: Record<string, unknown> = {};
  const extra: Record<string, unknown> = { ...((record.extra as Record<string, unknown> | undefined) ?? {}) };
  for (const [key, value] of Object.entries(record)) {
    if (key === "extra") continue;
    const column = stream.rename?.[key] ?? key;
    if (info.types.has(column) && !MANAGED.has(column)) row[column] = value;
    else if (value !== null && value !== undefined) extra[key] = value;
  }
  Object.assign(row, before);
  if (stream.derive) Object.assign(row, stream.derive(row));
  Object.assign(row, after);
  if (info.types.has("extra")) row.extra = extra;
  return row;
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
    const k = key.map((c) => keyPart(row[c])).join("\u0000");
    if (seen.has(k)) duplicates.push(row);
    else {
      seen.add(k);
      unique.push(row);
    }
  }
  return { unique, duplicates };
}

function keyPart(v: unknown): string {
  return v instanceof Date ? v.toISOString() : String(v);
}
