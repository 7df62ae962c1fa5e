// Times of rows still open (events not resolved), so their windows can be re-read.
import type { OpenRowsSpec } from "../../catalogue/types.ts";
import { isoTime, type SqlHandle } from "../driver/exec.ts";
import { assertColumns, quoteIdent } from "../sqlText.ts";
import { tableInfo } from "../tables.ts";

/** Open while every null column is null and no true column is true (the catalogue's declaration). */
export function openPredicate(rule: OpenRowsSpec): string {
  return [...rule.nullColumns.map((c) => `${quoteIdent(c)} IS NULL`), ...rule.trueColumns.map((c) => `${quoteIdent(c)} IS NOT TRUE`)].join(
    " AND ",
  );
}

/** Distinct values of the table's time column (its partition column, epoch ms) of the open rows of one project with time >= since. */
export async function readOpenTimes(sql: SqlHandle, table: string, rule: OpenRowsSpec, pcode: number, since: number): Promise<number[]> {
  const info = tableInfo(table);
  if (info.partitionColumn === null) throw new Error(`${table} has no time column`);
  assertColumns(info, [...rule.nullColumns, ...rule.trueColumns]);
  const col = quoteIdent(info.partitionColumn);
  const rows = await sql.unsafe<{ ms: number }[]>(
    `SELECT DISTINCT (extract(epoch from ${col}) * 1000)::float8 AS ms FROM ${quoteIdent(info.name)}
     WHERE "pcode" = $1::bigint AND ${col} >= $2::timestamptz AND ${openPredicate(rule)} ORDER BY 1 LIMIT 10000`,
    [pcode, isoTime(since)],
  );
  return rows.map((r) => r.ms);
}
