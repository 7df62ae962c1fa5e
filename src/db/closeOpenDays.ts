// The open days (rollupSql.ts) before a month start, closed: `prune` writes each into its daily
// rollup from its hourly rows before the hourly partitions holding them are dropped, so that the
// daily views keep them (a day the ledger never covered wholly, such as the first of a backfill
// that began in the middle of it, stays open until then).
import { type SqlHandle, toDate } from "./exec.ts";
import { closeDays } from "./rollupSql.ts";
import { ROLLUPS } from "./rollups.ts";

/** Writes the open days before `before` into the daily rollups and unmarks them; returns how many. */
export async function closeOpenDays(sql: SqlHandle, before: number): Promise<number> {
  let closed = 0;
  for (const spec of ROLLUPS.filter((r) => r.coverage)) {
    const [row] = await sql.unsafe<{ n: number }[]>(closeDays(spec), [toDate(before).toISOString()]);
    closed += row!.n;
  }
  return closed;
}
