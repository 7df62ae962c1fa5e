// Coverage of the report's heat map: how much of each time bucket the ledger's windows cover,
// per stream, project and window status.

import { isoTime, type SqlHandle } from "../../db/driver/exec.ts";
import type { WindowStatus } from "../../windows/types.ts";
import { pcodeFilter, type ReportScope } from "./reportScope.ts";

export interface CoverageRow {
  readonly stream: string;
  readonly pcode: number;
  readonly status: WindowStatus;
  /** Index of the bucket: its start is scope.from + bucket * bucketMs. */
  readonly bucket: number;
  /** Milliseconds of the bucket covered by windows of this status, summed over partitions. */
  readonly coveredMs: number;
}

/**
 * Each window is clipped to [from, to) and spread over the buckets it touches (a 1-hour window
 * touches one, a 365-day one every bucket): the work grows with the ledger, not with
 * ledger x buckets. Captures (zero-length windows) cover no time and are left out.
 */
export async function readCoverage(sql: SqlHandle, scope: ReportScope, bucketMs: number): Promise<CoverageRow[]> {
  const rows = await sql<CoverageRow[]>`
    SELECT "stream", "pcode"::float8 AS pcode, "status", i AS bucket,
      sum(least(e, ${scope.from}::float8 + (i + 1) * ${bucketMs}::float8) - greatest(s, ${scope.from}::float8 + i * ${bucketMs}::float8))::float8 AS "coveredMs"
    FROM (
      SELECT "stream", "pcode", "status",
        greatest(extract(epoch from "window_start") * 1000, ${scope.from}::float8)::float8 AS s,
        least(extract(epoch from "window_end") * 1000, ${scope.to}::float8)::float8 AS e
      FROM "sync_windows"
      WHERE "window_end" > "window_start" AND "window_start" < ${isoTime(scope.to)}::timestamptz
        AND "window_end" > ${isoTime(scope.from)}::timestamptz AND ${pcodeFilter(sql, "pcode", scope)}
    ) w
    CROSS JOIN LATERAL generate_series(floor((s - ${scope.from}::float8) / ${bucketMs}::float8)::int,
                                       ceil((e - ${scope.from}::float8) / ${bucketMs}::float8)::int - 1) AS i
    GROUP BY "stream", "pcode", "status", i
    ORDER BY "pcode", "stream", i`;
  return [...rows];
}
