// `reset --drop-rows`: the rows of windowed aggregates in a range go with their ledger windows,
// in the same transaction (the same delete a re-fetch does before writing the window again).
import { execute, type SqlHandle } from "../driver/exec.ts";
import { deleteWindow, type Scope } from "../sqlText.ts";
import { tableInfo } from "../tables.ts";

/** Deletes the rows of `table` of one project whose window lies inside [start, end), within `scope`. */
export function deleteWindowRows(sql: SqlHandle, table: string, pcode: number, start: Date, end: Date, scope: Scope = {}): Promise<number> {
  return execute(sql, deleteWindow(tableInfo(table), pcode, start, end, scope));
}

/** How many rows deleteWindowRows would delete (`reset --dry-run --drop-rows`): the same conditions, counted. */
export async function countWindowRows(
  sql: SqlHandle,
  table: string,
  pcode: number,
  start: Date,
  end: Date,
  scope: Scope = {},
): Promise<number> {
  const del = deleteWindow(tableInfo(table), pcode, start, end, scope);
  const text = del.text.replace(/^DELETE FROM /, "SELECT count(*)::float8 AS n FROM ");
  const [row] = await sql.unsafe<{ n: number }[]>(text, del.params as never[]);
  return row?.n ?? 0;
}
