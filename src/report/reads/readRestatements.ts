// The latest restatements, for `status` and the report: newest first, with how many there are.
import type { SqlHandle } from "../../db/driver/exec.ts";
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

/** At most `limit`, of the windows starting in the scope's range and of its projects (null: all of them). */
export async function readRestatements(sql: SqlHandle, limit: number, scope: ReportScope | null = null): Promise<Listed<Restatement>> {
  const [from, to] = scope ? [new Date(scope.from).toISOString(), new Date(scope.to).toISOString()] : [null, null];
  const rows = await sql<(Restatement & { total: number })[]>`
    SELECT "stream", "pcode"::float8 AS pcode, "partition", "window_start" AS "windowStart", "window_end" AS "windowEnd",
      "rows_before"::float8 AS "rowsBefore", "rows_after"::float8 AS "rowsAfter", "measure",
      "measure_before" AS "measureBefore", "measure_after" AS "measureAfter", "detected_at" AS "detectedAt",
      count(*) OVER ()::float8 AS total
    FROM "restatements"
    WHERE (${from}::timestamptz IS NULL OR ("window_start" >= ${from}::timestamptz AND "window_start" < ${to}::timestamptz))
      AND ${pcodeFilter(sql, "pcode", { pcodes: scope?.pcodes ?? null })}
    ORDER BY "detected_at" DESC, "id" DESC LIMIT ${limit}`;
  return { rows: rows.map(({ total: _, ...r }) => r), total: rows[0]?.total ?? 0 };
}
