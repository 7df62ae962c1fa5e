// Times of rows still open (events not resolved), so their windows can be re-read.
import { isoTime, type SqlHandle } from "./exec.ts";
import { quoteIdent } from "./sqlText.ts";
import { tableInfo } from "./tables.ts";

/**
 * Distinct values of `timeColumn` (epoch ms) of the rows of one project matching `openCondition`
 * (a fixed SQL predicate from the catalogue, never user input) with time >= since.
 */
export async function readOpenTimes(
  sql: SqlHandle,
  table: string,
  timeColumn: string,
  openCondition: string,
  pcode: number,
  since: number,
): Promise<number[]> {
  const info = tableInfo(table);
  if (!info.types.has(timeColumn)) throw new Error(`${table} has no column ${timeColumn}`);
  const col = quoteIdent(timeColumn);
  const rows = await sql.unsafe<{ ms: number }[]>(
    `SELECT DISTINCT (extract(epoch from ${col}) * 1000)::float8 AS ms FROM ${quoteIdent(info.name)}
     WHERE "pcode" = $1::bigint AND ${col} >= $2::timestamptz AND (${openCondition}) ORDER BY 1 LIMIT 10000`,
    [pcode, isoTime(since)],
  );
  return rows.map((r) => r.ms);
}
