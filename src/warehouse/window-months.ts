// Which monthly partitions the rows of a fetched window go to, read before its transaction so
// that they can be made first (db/ensurePartitions.ts).
import type { StreamSpec } from "../catalogue/types.ts";
import { windowColumns } from "../db/schema/columns.ts";
import { tableInfo } from "../db/tables.ts";
import type { WindowFetch } from "../engine/fetch-window.ts";
import type { Target } from "../engine/types.ts";
import { monthsOf } from "../windows/months.ts";

// Columns the writer fills from the window fetched, not from a record (engine/rows.ts).
const FROM_WINDOW = new Set(Object.keys(windowColumns()));

/**
 * The months (their starts) of the partition-column values of the window's rows: the leaves'
 * starts where the table is partitioned on the window, else each record's own time. A server may
 * send a point outside the window asked for; its month is among them, so its write still finds
 * a partition. [] for a table that is not partitioned.
 */
export function windowMonths(target: Target, fetched: WindowFetch): number[] {
  const column = tableInfo(target.stream.table).partitionColumn;
  if (column === null) return [];
  if (FROM_WINDOW.has(column)) return monthsOf(fetched.leaves.map((leaf) => leaf.start));
  return monthsOf(recordValues(fetched, recordKeyOf(target.stream, column)));
}

/** The record key that fills `column`: the one the stream renames to it, else the column's own name. */
export function recordKeyOf(stream: StreamSpec, column: string): string {
  return Object.entries(stream.rename ?? {}).find(([, to]) => to === column)?.[0] ?? column;
}

function* recordValues(fetched: WindowFetch, key: string): Generator<unknown> {
  for (const leaf of fetched.leaves) for (const record of leaf.records) yield (record as Record<string, unknown>)[key];
}
