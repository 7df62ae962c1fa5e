// The latest restatements, for `status` and the report: newest first, with how many there are.
import { isoTime, type SqlHandle } from "../../db/driver/exec.ts";
import type { Listed } from "./readProblemWindows.ts";
import { pcodeFilter, type ReportScope } from "./reportScope.ts";

/** One window the server answered differently when it was fetched again. */
export interface Restatement {
  readonly stream: string;
  readonly pcode: number;
  readonly partition: string;
  readonly windowStart: Date;
  readonly windowEnd: Date;
  readonly rowsBefore: number;
  readonly rowsAfter: number;
  /** The measure column summed (e.g. count); null for a stream without one. */
  readonly measure: string | null;
  readonly measureBefore: number | null;
  readonly measureAfter: number | null;
  readonly detectedAt: Date;
}

/** The newest restatements, at most the limit asked for, and how many the scope selects. */
export type RecentRestatements = Listed<Restatement>;

/** Restatements of the windows starting in the scope's range, of its projects; without a scope, all (status). */
export async function readRestatements(sql: SqlHandle, limit: number, scope: ReportScope | null = null): Promise<RecentRestatements> {
  const inScope = scope
    ? sql`"window_start" >= ${isoTime(scope.from)}::timestamptz AND "window_start" < ${isoTime(scope.to)}::timestamptz
        AND ${pcodeFilter(sql, "pcode", scope)}`
    : sql`true`;
  const rows = await sql<(Restatement & { total: number })[]>`
    SELECT "stream", "pcode"::float8 AS pcode, "partition", "window_start" AS "windowStart", "window_end" AS "windowEnd",
      "rows_before"::float8 AS "rowsBefore", "rows_after"::float8 AS "rowsAfter", "measure",
      "measure_before" AS "measureBefore", "measure_after" AS "measureAfter", "detected_at" AS "detectedAt",
      count(*) OVER ()::float8 AS total
    FROM "restatements"
    WHERE ${inScope}
    ORDER BY "detected_at" DESC, "id" DESC LIMIT ${limit}`;
  return { rows: rows.map(({ total: _, ...r }) => r), total: rows[0]?.total ?? 0 };
}
