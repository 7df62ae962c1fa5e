// The report's visitors per day and project (the daily granularity of the visitor counts).
import { isoTime, type SqlHandle } from "../../db/driver/exec.ts";
import { pcodeFilter, type ReportScope } from "./reportScope.ts";

export interface DailyVisitors {
  readonly pcode: number;
  /** UTC day, YYYY-MM-DD. */
  readonly day: string;
  readonly visitors: number;
}

/** Every day that overlaps the range (a range from 10:00 still shows that day's count). */
export async function readVisitorsPerDay(sql: SqlHandle, scope: ReportScope): Promise<DailyVisitors[]> {
  const rows = await sql<{ pcode: number; day: string; visitors: number }[]>`
    SELECT "pcode"::float8 AS pcode, to_char("ts" AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day, coalesce(sum("count"), 0)::float8 AS visitors
    FROM "visitors"
    WHERE "granularity" = 'd' AND "ts" >= date_trunc('day', ${isoTime(scope.from)}::timestamptz, 'UTC') AND "ts" < ${isoTime(scope.to)}::timestamptz
      AND ${pcodeFilter(sql, "pcode", scope)}
    GROUP BY 1, 2 ORDER BY 1, 2`;
  return [...rows];
}
