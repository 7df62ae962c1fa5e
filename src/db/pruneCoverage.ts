// The coverage rows of one grain's buckets before a month start: `prune` deletes them once the
// rollup partitions of that grain holding those buckets are gone (the table is small and not
// partitioned, so its rows go by DELETE; the space is reused by the rows that follow).
import { type SqlHandle, toDate } from "./exec.ts";
import { COVERAGE_TABLE, type RollupGrain } from "./rollups.ts";
import { quoteIdent } from "./sqlText.ts";

/** Deletes (or, in a dry run, counts) the coverage rows of `grain` with a bucket before `before`. */
export async function pruneCoverage(sql: SqlHandle, grain: RollupGrain, before: number, dryRun: boolean): Promise<number> {
  const where = `"grain" = $1::text AND "bucket_start" < $2::timestamptz`;
  const params = [grain, toDate(before).toISOString()];
  if (dryRun) {
    const [row] = await sql.unsafe<{ n: number }[]>(`SELECT count(*)::int AS n FROM ${quoteIdent(COVERAGE_TABLE)} WHERE ${where}`, params);
    return row!.n;
  }
  const result = await sql.unsafe(`DELETE FROM ${quoteIdent(COVERAGE_TABLE)} WHERE ${where}`, params);
  return result.count;
}
