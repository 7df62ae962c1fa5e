// Windowed aggregates: re-fetching a window REPLACES its rows (DESIGN.md section 2).
import { type CopyPart, copyParts } from "./copyRows.ts";
import { byCopy, channelOf, execute, onOneConnection, type SqlHandle, toDate, type WriteEncoding } from "./exec.ts";
import { chunk, type Row, rowsToJson } from "./rowsJson.ts";
import { deleteWindow, insertFromJson, type Scope } from "./sqlText.ts";
import { type TableRef, tableInfo } from "./tables.ts";

export interface ReplaceResult {
  readonly deleted: number;
  readonly inserted: number;
}

/**
 * Deletes the rows of window [windowStart, windowEnd) of one project, and of every sub-window
 * inside it (earlier splits), then inserts `rows`.
 * Run it inside the window's transaction.
 *
 * `columns` are the per-row columns (database names). pcode, and the window unless `columns`
 * lists window_start and window_end, are written from the arguments; so are the `extraScope`
 * columns (e.g. `{ time_merge: "avg" }`), which also limit what is deleted. When rows carry their
 * own window (the sub-windows of a split written in one go), each must lie inside the window.
 * `encoding` `copy` (a real Postgres) or a channel (the embedded database) COPYs the rows straight
 * into the table; `json` inserts JSON batches. `rows` may also be COPY parts (parsed records read
 * through getters, no row objects; COPY only): each part's constants then carry its window.
 */
export async function replaceWindowRows(
  sql: SqlHandle,
  table: TableRef,
  columns: readonly string[],
  pcode: number | bigint,
  windowStart: Date | number,
  windowEnd: Date | number,
  rows: readonly Row[] | { readonly parts: readonly CopyPart[] },
  extraScope: Scope = {},
  encoding: WriteEncoding = "json",
): Promise<ReplaceResult> {
  const info = tableInfo(table);
  const start = toDate(windowStart);
  const end = toDate(windowEnd);
  if (start >= end) throw new RangeError(`${info.name}: empty window ${start.toISOString()} .. ${end.toISOString()}`);
  const ownWindows = columns.includes("window_start") && columns.includes("window_end");
  if (!ownWindows && (columns.includes("window_start") || columns.includes("window_end"))) {
    throw new Error(`${info.name}: rows carry their own window only with both window_start and window_end`);
  }
  const constants: Scope = ownWindows ? { pcode, ...extraScope } : { pcode, window_start: start, window_end: end, ...extraScope };
  // COPY parts: each part's constants carry its window (a leaf inside the window). Rows: one part.
  let parts: readonly CopyPart[] | null = null;
  if ("parts" in rows) {
    if (!byCopy(encoding) || ownWindows)
      throw new Error(`${info.name}: COPY parts need a COPY encoding, and carry their window as constants`);
    assertInside(
      info.name,
      rows.parts.map((p) => p.constants),
      start,
      end,
    );
    parts = rows.parts.map((p) => ({ ...p, constants: { pcode, ...extraScope, ...p.constants } }));
  } else {
    if (ownWindows) assertInside(info.name, rows, start, end);
    if (byCopy(encoding)) parts = [{ items: rows, constants }];
  }
  const channel = byCopy(encoding) ? channelOf(encoding) : undefined;
  // The delete and the inserts are pipelined: sent together, run in order on the connection.
  // Only on one connection; and a channel's COPY does not queue behind the delete: it waits.
  const deleting = execute(sql, deleteWindow(info, pcode, start, end, extraScope));
  if (channel || !onOneConnection(sql)) await deleting;
  if (parts) {
    const [deleted, inserted] = await Promise.all([deleting, copyParts(sql, info, columns, parts, undefined, channel)]);
    return { deleted, inserted };
  }
  const rowList = rows as readonly Row[];
  // JSON batches one at a time (memory: one batch's text), the first one with the delete.
  const insert = insertFromJson(info, columns, constants);
  const insertBatch = (batch: readonly Row[]) =>
    execute(sql, { text: insert.text, params: [rowsToJson(info, columns, batch), ...insert.params.slice(1)] });
  const [first, ...rest] = chunk(rowList);
  const [deleted, firstCount] = await Promise.all([deleting, first ? insertBatch(first) : 0]);
  let inserted = firstCount;
  for (const batch of rest) inserted += await insertBatch(batch);
  return { deleted, inserted };
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
