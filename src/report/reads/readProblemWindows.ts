// The report's lists of failed windows (with their error) and truncated windows (with what the
// server said it had and what came).
import { isoTime, type SqlHandle } from "../../db/driver/exec.ts";
import { pcodeFilter, type ReportScope } from "./reportScope.ts";

export interface ProblemWindow {
  readonly stream: string;
  readonly pcode: number;
  readonly windowStart: number;
  readonly windowEnd: number;
  readonly expected: number | null;
  readonly fetched: number;
  readonly error: string | null;
}

/** The first rows of a list, and how many there are in all. */
export interface Listed<T> {
  readonly rows: T[];
  readonly total: number;
}

/** Windows of one status overlapping the range, newest first, at most `limit`; `total` counts them all. */
export async function readProblemWindows(
  sql: SqlHandle,
  scope: ReportScope,
  status: "failed" | "truncated",
  limit: number,
): Promise<Listed<ProblemWindow>> {
  const rows = await sql<(ProblemWindow & { total: number })[]>`
    SELECT "stream", "pcode"::float8 AS pcode, (extract(epoch from "window_start") * 1000)::float8 AS "windowStart",
      (extract(epoch from "window_end") * 1000)::float8 AS "windowEnd", "expected_total"::float8 AS expected,
      "rows_fetched"::float8 AS fetched, "error", count(*) OVER ()::float8 AS total
    FROM "sync_windows"
    WHERE "status" = ${status} AND "window_start" < ${isoTime(scope.to)}::timestamptz AND "window_end" > ${isoTime(scope.from)}::timestamptz
      AND ${pcodeFilter(sql, "pcode", scope)}
    ORDER BY "window_start" DESC, "stream", "pcode" LIMIT ${limit}`;
  return { rows: rows.map(({ total: _, ...r }) => r), total: rows[0]?.total ?? 0 };
}
