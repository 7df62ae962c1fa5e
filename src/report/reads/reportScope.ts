// What the report's reads share: the time range and the project filter as a SQL fragment.
import type postgres from "postgres";
import type { SqlHandle } from "../../db/driver/exec.ts";

/** The report's range, half-open [from, to) in epoch ms, and an optional project filter. */
export interface ReportScope {
  readonly from: number;
  readonly to: number;
  /** null: every project. Account-level rows (pcode 0) belong to every project and always stay. */
  readonly pcodes: readonly number[] | null;
}

/** `<column>` passes the project filter (one comma-list parameter, null for every project). */
export function pcodeFilter(sql: SqlHandle, column: string, scope: Pick<ReportScope, "pcodes">): postgres.PendingQuery<postgres.Row[]> {
  const list = scope.pcodes === null ? null : scope.pcodes.join(",");
  return sql`(${list}::text IS NULL OR ${sql(column)} = 0 OR ${sql(column)} = ANY(string_to_array(${list}::text, ',')::bigint[]))`;
}
