// `reset --drop-rows`: the rows of windowed aggregates in a range go with their ledger windows,
// in the same transaction (the same delete a re-fetch does before writing the window again).
import type { SqlHandle } from "../driver/exec.ts";
import { deleteWindow, quoteIdent, type Scope } from "../sqlText.ts";
import { tableInfo } from "../tables.ts";

/** What deleteWindowRows deleted: how many rows, and the time they spanned (null when none). */
export interface DeletedRows {
  readonly rows: number;
  /** From the earliest window start (or row time) to the latest window end (or row time), in ms. */
  readonly span: { readonly fromMs: number; readonly toMs: number } | null;
}

/** The rows of `table` of one project whose window lies inside [start, end), within `scope`. */
export interface WindowRows {
  readonly table: string;
  readonly pcode: number;
  readonly start: Date;
  readonly end: Date;
  readonly scope: Scope;
}

const deleteOf = (w: WindowRows) => deleteWindow(tableInfo(w.table), w.pcode, w.start, w.end, w.scope);

/**
 * Deletes rows `w`; says the time they spanned, their windows and their own times (the partition
 * column, which may lie a little outside the window), so that only the rollup hours they were in
 * are marked.
 */
export async function deleteWindowRows(sql: SqlHandle, w: WindowRows): Promise<DeletedRows> {
  const column = tableInfo(w.table).partitionColumn;
  const del = deleteOf(w);
  const time = column ? `, ${quoteIdent(column)} AS "t"` : `, NULL::timestamptz AS "t"`;
  const [row] = await sql.unsafe<{ n: number; from: Date | null; to: Date | null }[]>(
    `WITH "gone" AS (${del.text} RETURNING "window_start", "window_end"${time})
     SELECT count(*)::float8 AS "n", least(min("window_start"), min("t")) AS "from",
       greatest(max("window_end"), max("t") + interval '1 millisecond') AS "to" FROM "gone"`,
    del.params as never[],
  );
  const n = row?.n ?? 0;
  return { rows: n, span: n > 0 && row?.from && row.to ? { fromMs: row.from.getTime(), toMs: row.to.getTime() } : null };
}

/** How many rows deleteWindowRows would delete (`reset --dry-run --drop-rows`): the same conditions, counted. */
export async function countWindowRows(sql: SqlHandle, w: WindowRows): Promise<number> {
  const del = deleteOf(w);
  const text = del.text.replace(/^DELETE FROM /, "SELECT count(*)::float8 AS n FROM ");
  const [row] = await sql.unsafe<{ n: number }[]>(text, del.params as never[]);
  return row?.n ?? 0;
}
