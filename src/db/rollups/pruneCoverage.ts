// The buckets' coverage rows before a month start: `prune` deletes them once the rollup partitions
// holding those buckets are gone (the table is small and not partitioned, so its rows go by
// DELETE; the space is reused by the rows that follow).
import { type SqlHandle, toDate } from "../driver/exec.ts";
import { quoteIdent } from "../sqlText.ts";
import { COVERAGE_TABLE } from "./spec.ts";

/** Deletes (or, in a dry run, counts) the coverage rows of hours and days before `before`. */
export async function pruneCoverage(sql: SqlHandle, before: number, dryRun: boolean): Promise<number> {
  const where = `"bucket_start" < $1::timestamptz`;
  const params = [toDate(before).toISOString()];
  if (dryRun) {
    const [row] = await sql.unsafe<{ n: number }[]>(`SELECT count(*)::int AS n FROM ${quoteIdent(COVERAGE_TABLE)} WHERE ${where}`, params);
    return row!.n;
  }
  const result = await sql.unsafe(`DELETE FROM ${quoteIdent(COVERAGE_TABLE)} WHERE ${where}`, params);
  return result.count;
}
