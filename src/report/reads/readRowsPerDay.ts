// The report's "rows per day per table": rows written, per stream and UTC day, from the ledger
// (each window records how many rows it wrote; counting the tables themselves would need each
// table's time column and a scan of every row).
import { isoTime, type SqlHandle } from "../../db/driver/exec.ts";
import { pcodeFilter, type ReportScope } from "./reportScope.ts";

export interface StreamRowsPerDay {
  readonly stream: string;
  /** UTC day, YYYY-MM-DD. */
  readonly day: string;
  readonly rows: number;
}

/** A window counts on the day of its start (a capture: of its instant), clipped to the range. */
export async function readRowsPerDay(sql: SqlHandle, scope: ReportScope): Promise<StreamRowsPerDay[]> {
  const from = isoTime(scope.from);
  const rows = await sql<{ stream: string; day: string; rows: number }[]>`
    SELECT "stream", to_char(greatest("window_start", ${from}::timestamptz) AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day,
      sum("rows_written")::float8 AS rows
    FROM "sync_windows"
    WHERE "status" <> 'failed' AND "window_start" < ${isoTime(scope.to)}::timestamptz
      AND ("window_end" > ${from}::timestamptz OR "window_start" >= ${from}::timestamptz)
      AND ${pcodeFilter(sql, "pcode", scope)}
    GROUP BY 1, 2 ORDER BY 1, 2`;
  return [...rows];
}
