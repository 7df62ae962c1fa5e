// Fan-out, read from the catalogue's `parent` declaration in this one place (the engine, `check`
// and the row mapper all come here): which keys of a parent's list can be asked for, the request
// parameter a key fills, and the column it is written to (which is also the scope a complete list
// soft-deletes within).
import { operation } from "../catalogue/index.ts";
import type { OperationDef, ParentSpec, StreamSpec } from "../catalogue/types.ts";
import type { SqlHandle } from "../db/driver/exec.ts";
import { tableInfo } from "../db/tables.ts";
import { readLiveKeys } from "../db/write/readLiveKeys.ts";
import type { Target } from "./types.ts";

/** The keys of a parent's list that can be asked for, and those its skip rule leaves out. */
export interface ParentKeys {
  readonly keys: string[];
  readonly skipped: string[];
}

/** Splits listed keys by the parent's skip rule (masked keys cannot be asked for). */
export function askableKeys(parent: ParentSpec, listed: readonly string[]): ParentKeys {
  const skip = parent.skip?.when ?? (() => false);
  return { keys: listed.filter((k) => !skip(k)), skipped: listed.filter(skip) };
}

/** The live keys the parent stream's table lists now (what its last sync wrote). */
export async function readParentKeys(sql: SqlHandle, parent: ParentSpec): Promise<ParentKeys> {
  const table = operation(parent.stream).stream!.table;
  return askableKeys(parent, await readLiveKeys(sql, table, parent.key));
}

/** A key as the value of `column` of `table` (partitions are text; pcode is a number). */
function keyValue(table: string, column: string, key: string): string | number {
  return tableInfo(table).types.get(column) === "bigint" ? Number(key) : key;
}

/** The column a child stream's rows carry its key in, e.g. `{ pcode: 35 }`; none without a parent. */
export function parentColumns(stream: StreamSpec, partition: string): Record<string, string | number> {
  const parent = stream.parent;
  return parent ? { [parent.column]: keyValue(stream.table, parent.column, partition) } : {};
}

/** A target of an account stream: the whole account, or one key of its parent's list. */
export function accountTarget(op: OperationDef, key = ""): Target {
  const parent = op.stream!.parent;
  const params = parent ? { [parent.param]: keyValue(op.stream!.table, parent.column, key) } : {};
  return { op, stream: op.stream!, pcode: 0, partition: key, params };
}
