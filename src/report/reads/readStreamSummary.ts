// Per stream and project, for the report: window counts and rows in the range (from the ledger),
// the watermark, and how many partitions and what kind of windows the stream has.
import { isoTime, type SqlHandle } from "../../db/driver/exec.ts";
import { GONE_STATUSES } from "../../windows/types.ts";
import { pcodeFilter, type ReportScope } from "./reportScope.ts";

export interface StreamSummary {
  readonly stream: string;
  readonly pcode: number;
  readonly done: number;
  readonly truncated: number;
  readonly failed: number;
  /** Windows whose rows `prune` dropped (archived to Parquet first or not). */
  readonly pruned: number;
  readonly rows: number;
  readonly quarantined: number;
  /** Ledger partitions of the stream (filters); coverage is shared among them. */
  readonly partitions: number;
  /** false for captures (snapshots, dimension lists): zero-length windows that cover no time. */
  readonly windowed: boolean;
  /** Least advanced partition's watermark (epoch ms), like the stream_freshness view. */
  readonly watermark: number | null;
  /** End of the latest done or truncated window, of all time (epoch ms). */
  readonly lastWindowEnd: number | null;
  /** Start of the stream's first window of all time (epoch ms): before it, time is not synced yet, not missing. */
  readonly firstWindowStart: number | null;
}

/**
 * A window is in the range when it overlaps [from, to); a capture (zero-length window) when its
 * instant is inside it. Partitions, kind and freshness look at the whole ledger.
 */
export async function readStreamSummary(sql: SqlHandle, scope: ReportScope): Promise<StreamSummary[]> {
  const from = isoTime(scope.from);
  const to = isoTime(scope.to);
  const rows = await sql<StreamSummary[]>`
    WITH "l" AS (
      SELECT *, "window_start" < ${to}::timestamptz AND ("window_end" > ${from}::timestamptz OR "window_start" >= ${from}::timestamptz) AS in_range
      FROM "sync_windows" WHERE ${pcodeFilter(sql, "pcode", scope)}
    ), "s" AS (
      SELECT "stream", "pcode",
        count(*) FILTER (WHERE in_range AND "status" = 'done') AS done,
        count(*) FILTER (WHERE in_range AND "status" = 'truncated') AS truncated,
        count(*) FILTER (WHERE in_range AND "status" = 'failed') AS failed,
        count(*) FILTER (WHERE in_range AND "status" = ANY(${GONE_STATUSES as readonly string[] as string[]}::text[])) AS pruned,
        coalesce(sum("rows_written") FILTER (WHERE in_range), 0) AS rows,
        coalesce(sum("quarantined") FILTER (WHERE in_range), 0) AS quarantined,
        count(DISTINCT "partition") AS partitions,
        bool_or("window_end" > "window_start") AS windowed,
        max("window_end") FILTER (WHERE "status" <> 'failed') AS last_window_end,
        min("window_start") FILTER (WHERE "window_end" > "window_start") AS first_window_start
      FROM "l" GROUP BY "stream", "pcode"
    ), "w" AS (
      SELECT "stream", "pcode", min("watermark") AS "watermark" FROM "watermarks" GROUP BY "stream", "pcode"
    )
    SELECT "stream", "pcode"::float8 AS pcode, done::float8 AS done, truncated::float8 AS truncated, failed::float8 AS failed, pruned::float8 AS pruned,
      rows::float8 AS rows, quarantined::float8 AS quarantined, partitions::float8 AS partitions, windowed,
      (extract(epoch from "watermark") * 1000)::float8 AS watermark, (extract(epoch from last_window_end) * 1000)::float8 AS "lastWindowEnd",
      (extract(epoch from first_window_start) * 1000)::float8 AS "firstWindowStart"
    FROM "s" LEFT JOIN "w" USING ("stream", "pcode")
    ORDER BY "pcode", "stream"`;
  return [...rows];
}
