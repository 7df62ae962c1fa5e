// The report's default range: what the ledger spans.
import type { SqlHandle } from "../../db/driver/exec.ts";

export interface LedgerSpan {
  /** Where the synced time begins (epoch ms), see readLedgerSpan; null when the ledger is empty. */
  readonly from: number | null;
  /** Latest end of any ledger row, captures included (epoch ms). */
  readonly to: number | null;
}

/**
 * The start is where every stream that began together has data: one sync from `start` gives each
 * stream a first window aligned to its own grain (hourly streams at now - 2 d rounded to the
 * hour, daily series at that day's midnight), so the latest first window of those that began
 * within a day of the earliest one. A stream added weeks later does not move it (its earlier
 * time is shown as not synced yet). Windows longer than a day are left out: monthly visitors are
 * fetched in 365-day windows and would stretch the report over months; they still count in the
 * report where they overlap it.
 */
export async function readLedgerSpan(sql: SqlHandle): Promise<LedgerSpan> {
  const [row] = await sql<{ from: number | null; to: number | null }[]>`
    WITH "firsts" AS (
      SELECT min("window_start") AS "first" FROM "sync_windows"
      WHERE "window_end" > "window_start" AND "window_end" - "window_start" <= interval '1 day'
      GROUP BY "stream", "pcode", "partition"
    )
    SELECT (extract(epoch from coalesce(
        (SELECT max("first") FROM "firsts" WHERE "first" < (SELECT min("first") FROM "firsts") + interval '1 day'),
        (SELECT min("window_start") FROM "sync_windows"))) * 1000)::float8 AS "from",
      (extract(epoch from (SELECT max("window_end") FROM "sync_windows")) * 1000)::float8 AS "to"`;
  return { from: row?.from ?? null, to: row?.to ?? null };
}
