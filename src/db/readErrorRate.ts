// The report's error rate per hour and project, over all services (view stat_transaction_hourly).
import { isoTime, type SqlHandle } from "./exec.ts";
import { pcodeFilter, type ReportScope } from "./reportScope.ts";

export interface HourlyErrorRate {
  readonly pcode: number;
  /** Start of the UTC hour (epoch ms). */
  readonly hour: number;
  readonly count: number;
  readonly error: number;
  /** null when the hour had no transaction. */
  readonly errorRate: number | null;
}

export async function readErrorRate(sql: SqlHandle, scope: ReportScope): Promise<HourlyErrorRate[]> {
  const rows = await sql<HourlyErrorRate[]>`
    SELECT "pcode"::float8 AS pcode, (extract(epoch from "bucket_start") * 1000)::float8 AS hour,
      coalesce(sum("count"), 0)::float8 AS count, coalesce(sum("error"), 0)::float8 AS error,
      (sum("error")::float8 / nullif(sum("count"), 0))::float8 AS "errorRate"
    FROM "stat_transaction_hourly"
    WHERE "bucket_start" >= ${isoTime(scope.from)}::timestamptz AND "bucket_start" < ${isoTime(scope.to)}::timestamptz
      AND ${pcodeFilter(sql, "pcode", scope)}
    GROUP BY "pcode", "bucket_start" ORDER BY "pcode", "bucket_start"`;
  return [...rows];
}
