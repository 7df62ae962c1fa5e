// The demo's report: rows and windows per stream, and three example BI queries over the views.
import type { SqlHandle } from "../db/driver/exec.ts";
import { nounFor } from "../engine/summary.ts";

export interface DemoReport {
  /** Time range the aggregated statistics cover (epoch ms), per project. */
  readonly coverage: { pcode: number; from: number; to: number }[];
  readonly streams: { stream: string; rows: number; windows: number }[];
  readonly topServicesPerDay: { day: string; pcode: number; service: string; timeSum: number; count: number }[];
  readonly errorRateByHour: { hour: string; count: number; error: number; errorRate: number }[];
  readonly visitorsPerDay: { day: string; pcode: number; visitors: number }[];
}

export async function demoReport(sql: SqlHandle, runStreams: ReadonlyMap<string, { rows: number; windows: number }>): Promise<DemoReport> {
  const coverage = await sql<{ pcode: number; from: number; to: number }[]>`
    SELECT "pcode"::float8 AS pcode, (extract(epoch from min("window_start")) * 1000)::float8 AS "from",
      (extract(epoch from max("window_end")) * 1000)::float8 AS "to"
    FROM "stat_transaction" GROUP BY "pcode" ORDER BY "pcode"`;
  // Example 1: the three services with the most total time per day (all projects).
  const top = await sql<{ day: string; pcode: number; service: string; time_sum: number; count: number }[]>`
    SELECT to_char("bucket_start", 'YYYY-MM-DD') AS day, "pcode"::float8 AS pcode, "service",
      "time_sum"::float8 AS time_sum, "count"::float8 AS count
    FROM (SELECT *, rank() OVER (PARTITION BY "bucket_start" ORDER BY "time_sum" DESC, "service") AS r
          FROM "stat_transaction_daily") ranked
    WHERE r <= 3 ORDER BY day, r`;
  // Example 2: error rate per hour over all services and projects (the last 12 hours synced).
  const errors = await sql<{ hour: string; count: number; error: number; error_rate: number }[]>`
    SELECT to_char("bucket_start", 'YYYY-MM-DD HH24:00') AS hour, sum("count")::float8 AS count,
      sum("error")::float8 AS error, (sum("error")::float8 / nullif(sum("count"), 0))::float8 AS error_rate
    FROM "stat_transaction_hourly" GROUP BY "bucket_start" ORDER BY "bucket_start" DESC LIMIT 12`;
  // Example 3: visitors per day (daily granularity of the visitor counts).
  const visitors = await sql<{ day: string; pcode: number; visitors: number }[]>`
    SELECT to_char("ts" AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day, "pcode"::float8 AS pcode, sum("count")::float8 AS visitors
    FROM "visitors" WHERE "granularity" = 'd' GROUP BY 1, 2 ORDER BY 1, 2`;
  return {
    coverage: [...coverage],
    streams: [...runStreams].sort(([a], [b]) => (a < b ? -1 : 1)).map(([stream, c]) => ({ stream, rows: c.rows, windows: c.windows })),
    topServicesPerDay: top.map((r) => ({ day: r.day, pcode: r.pcode, service: r.service, timeSum: r.time_sum, count: r.count })),
    errorRateByHour: errors.reverse().map((r) => ({ hour: r.hour, count: r.count, error: r.error, errorRate: r.error_rate })),
    visitorsPerDay: visitors.map((r) => ({ day: r.day, pcode: r.pcode, visitors: r.visitors })),
  };
}

export function formatDemoReport(report: DemoReport): string {
  const lines: string[] = ["", "rows and windows written by this run, per stream:"];
  for (const s of report.streams)
    lines.push(
      `  ${s.stream.padEnd(30)} ${String(s.rows).padStart(9)} ${nounFor(s.rows, "row").padEnd(4)} ${String(s.windows).padStart(5)} ${nounFor(s.windows, "window")}`,
    );
  lines.push("", "1. top services by total time per day (view stat_transaction_daily):");
  for (const r of report.topServicesPerDay)
    lines.push(
      `  ${r.day}  ${String(r.pcode).padEnd(11)} ${r.service.padEnd(40)} ${Math.round(r.timeSum).toLocaleString("en").padStart(14)} ms in ${r.count} tx`,
    );
  lines.push("", "2. error rate by hour (view stat_transaction_hourly, last 12 hours):");
  for (const r of report.errorRateByHour)
    lines.push(`  ${r.hour}  ${(100 * r.errorRate).toFixed(2).padStart(6)} %  (${r.error} of ${r.count})`);
  lines.push("", "3. visitors per day (table visitors, granularity 'd'):");
  for (const r of report.visitorsPerDay) lines.push(`  ${r.day}  ${String(r.pcode).padEnd(11)} ${r.visitors}`);
  return `${lines.join("\n")}\n`;
}
