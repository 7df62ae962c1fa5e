// The report's default range: what the ledger spans.
import type { SqlHandle } from "./exec.ts";

export interface LedgerSpan {
  /** Earliest start of a window of a day or less (epoch ms); null when the ledger is empty. */
  readonly from: number | null;
  /** Latest end of any ledger row, captures included (epoch ms). */
  readonly to: number | null;
}

/**
 * Windows longer than a day are left out of the start: monthly visitors are fetched in 365-day
 * windows and weekly-or-longer grains reach far before the rest of the data, which would stretch
 * the report over months of "missing". They still count in the report where they overlap it.
 */
export async function readLedgerSpan(sql: SqlHandle): Promise<LedgerSpan> {
  const [row] = await sql<{ from: number | null; to: number | null }[]>`
    SELECT (extract(epoch from coalesce(min("window_start") FILTER (WHERE "window_end" - "window_start" <= interval '1 day'),
                                        min("window_start"))) * 1000)::float8 AS "from",
      (extract(epoch from max("window_end")) * 1000)::float8 AS "to"
    FROM "sync_windows"`;
  return { from: row?.from ?? null, to: row?.to ?? null };
}
