// The open days (rollupSql.ts) `prune` must settle before it drops partitions: those before the
// month the daily rollups keep from go (their days are pruned), and those before the month the
// hourly rollups keep from are written into the daily rollup from their hourly rows, so that the
// daily views keep them once the hours are gone (a day the ledger never covered wholly, such as
// one a failed window left, stays open until then).
import { type SqlHandle, toDate } from "./exec.ts";
import { closeDays } from "./rollupSql.ts";
import { OPEN_DAYS_TABLE, ROLLUPS } from "./rollups.ts";
import { quoteIdent } from "./sqlText.ts";

/** Month starts (epoch ms) the daily and the hourly rollups keep from; null: they keep everything. */
export interface OpenDaysCut {
  readonly daily: number | null;
  readonly hourly: number | null;
}

/** Drops the open days before `cut.daily`, then closes those before `cut.hourly`; returns how many were closed. */
export async function settleOpenDays(sql: SqlHandle, cut: OpenDaysCut): Promise<number> {
  if (cut.daily !== null)
    await sql.unsafe(`DELETE FROM ${quoteIdent(OPEN_DAYS_TABLE)} WHERE "bucket_start" < $1::timestamptz`, [
      toDate(cut.daily).toISOString(),
    ]);
  if (cut.hourly === null) return 0;
  let closed = 0;
  for (const spec of ROLLUPS.filter((r) => r.coverage)) {
    const [row] = await sql.unsafe<{ n: number }[]>(closeDays(spec), [toDate(cut.hourly).toISOString()]);
    closed += row!.n;
  }
  return closed;
}
