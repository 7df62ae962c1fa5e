// The latest restatements, for `status` and the report: newest first, with how many there are.
import type { SqlHandle } from "../../db/driver/exec.ts";

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

export interface RecentRestatements {
  /** The newest, at most the limit asked for. */
  readonly rows: readonly Restatement[];
  /** Every restatement the filter selects. */
  readonly total: number;
}

/** Windows starting in [from, to) of these projects (null: every project); without one, all. */
export interface RestatementFilter {
  readonly from: number;
  readonly to: number;
  readonly pcodes: readonly number[] | null;
}

export async function readRestatements(
  sql: SqlHandle,
  limit: number,
  filter: RestatementFilter | null = null,
): Promise<RecentRestatements> {
  const [from, to] = filter ? [new Date(filter.from).toISOString(), new Date(filter.to).toISOString()] : [null, null];
  const pcodes = filter?.pcodes ? filter.pcodes.join(",") : null;
  const rows = await sql<(Restatement & { total: number })[]>`
    SELECT "stream", "pcode"::float8 AS pcode, "partition", "window_start" AS "windowStart", "window_end" AS "windowEnd",
      "rows_before"::float8 AS "rowsBefore", "rows_after"::float8 AS "rowsAfter", "measure",
      "measure_before" AS "measureBefore", "measure_after" AS "measureAfter", "detected_at" AS "detectedAt",
      count(*) OVER ()::float8 AS total
    FROM "restatements"
    WHERE (${from}::timestamptz IS NULL OR ("window_start" >= ${from}::timestamptz AND "window_start" < ${to}::timestamptz))
      AND (${pcodes}::text IS NULL OR "pcode" = ANY(string_to_array(${pcodes}::text, ',')::bigint[]))
    ORDER BY "detected_at" DESC, "id" DESC LIMIT ${limit}`;
  return { rows: rows.map(({ total: _, ...r }) => r), total: rows[0]?.total ?? 0 };
}
