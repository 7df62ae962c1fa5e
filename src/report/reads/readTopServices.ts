// The report's "top services": total time per service over the range (aggregated statistics).
import { isoTime, type SqlHandle } from "../../db/driver/exec.ts";
import { pcodeFilter, type ReportScope } from "./reportScope.ts";

export interface TopService {
  readonly pcode: number;
  readonly service: string;
  readonly timeSum: number;
  readonly count: number;
  readonly error: number;
}

/** Windows belong to the range by their start, as in the rollup views. */
export async function readTopServices(sql: SqlHandle, scope: ReportScope, limit: number): Promise<TopService[]> {
  const rows = await sql<TopService[]>`
    SELECT "pcode"::float8 AS pcode, coalesce(max("service"), '?') AS service, coalesce(sum("time_sum"), 0)::float8 AS "timeSum",
      coalesce(sum("count"), 0)::float8 AS count, coalesce(sum("error"), 0)::float8 AS error
    FROM "stat_transaction"
    WHERE "window_start" >= ${isoTime(scope.from)}::timestamptz AND "window_start" < ${isoTime(scope.to)}::timestamptz
      AND ${pcodeFilter(sql, "pcode", scope)}
    GROUP BY "pcode", "service_hash" ORDER BY "timeSum" DESC, service LIMIT ${limit}`;
  return [...rows];
}
