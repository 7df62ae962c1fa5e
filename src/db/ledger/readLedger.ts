// Ledger rows of one stream for the planner (gaps, failed windows) and `status`.

import type { WindowStatus } from "../../windows/types.ts";
import { isoTime, type SqlHandle } from "../driver/exec.ts";

/** A ledger row with times as epoch ms. */
export interface LedgerEntry {
  readonly id: number;
  readonly stream: string;
  readonly pcode: number;
  readonly partition: string;
  readonly windowStart: number;
  readonly windowEnd: number;
  readonly status: WindowStatus;
  readonly expectedTotal: number | null;
  readonly rowsFetched: number;
  readonly rowsWritten: number;
  readonly error: string | null;
  readonly runId: number | null;
}

export interface LedgerQuery {
  readonly stream: string;
  readonly pcode: number;
  readonly partition?: string;
  /** Only windows ending after this time. */
  readonly from?: Date | number;
  /** Only windows starting before this time. */
  readonly to?: Date | number;
}

/** Ledger rows of (stream, pcode, partition) overlapping [from, to), ordered by window start. */
export async function readLedger(sql: SqlHandle, q: LedgerQuery): Promise<LedgerEntry[]> {
  const from = q.from === undefined ? null : isoTime(q.from);
  const to = q.to === undefined ? null : isoTime(q.to);
  const rows = await sql<Record<string, string | number | null>[]>`
    SELECT "id"::float8 AS id, "stream", "pcode"::float8 AS pcode, "partition",
      (extract(epoch from "window_start") * 1000)::float8 AS window_start,
      (extract(epoch from "window_end") * 1000)::float8 AS window_end,
      "status", "expected_total"::float8 AS expected_total, "rows_fetched"::float8 AS rows_fetched,
      "rows_written"::float8 AS rows_written, "error", "run_id"::float8 AS run_id
    FROM "sync_windows"
    WHERE "stream" = ${q.stream} AND "pcode" = ${q.pcode}::bigint AND "partition" = ${q.partition ?? ""}
      AND (${from}::timestamptz IS NULL OR "window_end" > ${from}::timestamptz)
      AND (${to}::timestamptz IS NULL OR "window_start" < ${to}::timestamptz)
    ORDER BY "window_start", "window_end"`;
  return rows.map((r) => ({
    id: r.id as number,
    stream: r.stream as string,
    pcode: r.pcode as number,
    partition: r.partition as string,
    windowStart: r.window_start as number,
    windowEnd: r.window_end as number,
    status: r.status as WindowStatus,
    expectedTotal: r.expected_total as number | null,
    rowsFetched: r.rows_fetched as number,
    rowsWritten: r.rows_written as number,
    error: r.error as string | null,
    runId: r.run_id as number | null,
  }));
}
