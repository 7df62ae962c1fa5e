// The report's quarantined records: how many per stream, project and reason (never the records:
// their raw JSON stays in the table).
import { isoTime, type SqlHandle } from "../../db/driver/exec.ts";
import type { Listed } from "./readProblemWindows.ts";
import { pcodeFilter, type ReportScope } from "./reportScope.ts";

export interface QuarantineGroup {
  readonly stream: string;
  readonly pcode: number | null;
  readonly reason: string;
  readonly records: number;
  /** Latest window (or, without a window, time quarantined) of the group (epoch ms). */
  readonly lastAt: number;
}

/**
 * Largest groups first, at most `limit` (`total` counts them all); a record without a window
 * counts by when it was quarantined.
 */
export async function readQuarantineSummary(sql: SqlHandle, scope: ReportScope, limit: number): Promise<Listed<QuarantineGroup>> {
  const rows = await sql<(QuarantineGroup & { total: number })[]>`
    SELECT "stream", "pcode"::float8 AS pcode, "reason", count(*)::float8 AS records,
      (extract(epoch from max(coalesce("window_start", "created_at"))) * 1000)::float8 AS "lastAt", count(*) OVER ()::float8 AS total
    FROM "quarantine"
    WHERE coalesce("window_start", "created_at") >= ${isoTime(scope.from)}::timestamptz
      AND coalesce("window_start", "created_at") < ${isoTime(scope.to)}::timestamptz
      AND ("pcode" IS NULL OR ${pcodeFilter(sql, "pcode", scope)})
    GROUP BY 1, 2, 3 ORDER BY records DESC, 1, 2, 3 LIMIT ${limit}`;
  return { rows: rows.map(({ total: _, ...r }) => r), total: rows[0]?.total ?? 0 };
}
