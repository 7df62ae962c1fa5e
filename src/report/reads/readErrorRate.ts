// The report's error rate per hour (or day) and project, over all services (views
// stat_transaction_hourly and stat_transaction_daily).
import { isoTime, type SqlHandle } from "../../db/driver/exec.ts";
import { pcodeFilter, type ReportScope } from "./reportScope.ts";

export interface ErrorRatePoint {
  readonly pcode: number;
  /** Start of the UTC hour or day (epoch ms). */
  readonly bucket: number;
  readonly count: number;
  readonly error: number;
  /** null when the bucket had no transaction. */
  readonly errorRate: number | null;
}

/** Per hour up to the report's hourly ranges; per day beyond (2,160 hourly points a line at 90 days read as noise). */
export async function readErrorRate(sql: SqlHandle, scope: ReportScope, bucket: "hour" | "day"): Promise<ErrorRatePoint[]> {
  const view = bucket === "hour" ? "stat_transaction_hourly" : "stat_transaction_daily";
  const rows = await sql<ErrorRatePoint[]>`
    SELECT "pcode"::float8 AS pcode, (extract(epoch from "bucket_start") * 1000)::float8 AS bucket,
      coalesce(sum("count"), 0)::float8 AS count, coalesce(sum("error"), 0)::float8 AS error,
      (sum("error")::float8 / nullif(sum("count"), 0))::float8 AS "errorRate"
    FROM ${sql(view)}
    WHERE "bucket_start" >= ${isoTime(scope.from)}::timestamptz AND "bucket_start" < ${isoTime(scope.to)}::timestamptz
      AND ${pcodeFilter(sql, "pcode", scope)}
    GROUP BY "pcode", "bucket_start" ORDER BY "pcode", "bucket_start"`;
  return [...rows];
}
