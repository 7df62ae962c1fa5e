// Windowed aggregates: re-fetching a window REPLACES its rows (DESIGN.md section 2).
import { copyRows, type Row } from "./copyRows.ts";
import { execute, type TxHandle, toDate } from "./exec.ts";
import { deleteWindow, type Scope } from "./sqlText.ts";
import { type TableRef, tableInfo } from "./tables.ts";

export interface ReplaceResult {
  readonly deleted: number;
  readonly inserted: number;
  /** Values written with U+FFFD for text the database cannot hold (cleanText.ts). */
  readonly replaced: number;
}

/**
 * Deletes the rows of window [windowStart, windowEnd) of one project, and of every sub-window
 * inside it (earlier splits), then COPYs the new rows in; the two leave pipelined, in one round trip.
 *
 * `columns` are the per-row columns (database names). pcode, and the window unless `columns`
 * lists window_start and window_end, are written from the arguments; so are the `extraScope`
 * columns (e.g. `{ time_merge: "avg" }`), which also limit what is deleted. When rows carry their
 * own window (the sub-windows of a split written in one go), each must lie inside the window.
 * `rows` are encoded before the promise is returned (copyRows).
 */
export async function replaceWindowRows(
  tx: TxHandle,
  table: TableRef,
  columns: readonly string[],
  pcode: number | bigint,
  windowStart: Date | number,
  windowEnd: Date | number,
  rows: readonly Row[],
  extraScope: Scope = {},
): Promise<ReplaceResult> {
  const info = tableInfo(table);
  const start = toDate(windowStart);
  const end = toDate(windowEnd);
  if (start >= end) throw new RangeError(`${info.name}: empty window ${start.toISOString()} .. ${end.toISOString()}`);
  const ownWindows = columns.includes("window_start") && columns.includes("window_end");
  if (!ownWindows && (columns.includes("window_start") || columns.includes("window_end"))) {
    throw new Error(`${info.name}: rows carry their own window only with both window_start and window_end`);
  }
  if (ownWindows) assertInside(info.name, rows, start, end);
  const constants = ownWindows ? { pcode, ...extraScope } : { pcode, window_start: start, window_end: end, ...extraScope };
  const deleting = execute(tx, deleteWindow(info, pcode, start, end, extraScope));
  const [deleted, copied] = await Promise.all([deleting, copyRows(tx, info, columns, rows, { constants })]);
  return { deleted, inserted: copied.rows, replaced: copied.replaced };
}

const msOf = (v: unknown): number => (v instanceof Date ? v.getTime() : Number(v));

function assertInside(table: string, rows: readonly Row[], start: Date, end: Date): void {
  const s = start.getTime();
  const e = end.getTime();
  for (const row of rows) {
    const ws = msOf(row.window_start);
    const we = msOf(row.window_end);
    if (!(ws >= s && we <= e && ws < we)) {
      throw new RangeError(
        `${table}: row window ${String(row.window_start)} .. ${String(row.window_end)} is not inside the replaced window`,
      );
    }
  }
}
