// Which (stream, project, partition) slices the warehouse holds for some streams: what `reset`
// may forget. Read from both the ledger and the watermarks (a slice may have only one of them).
import type { SqlHandle } from "../driver/exec.ts";

export interface StreamPartition {
  readonly stream: string;
  readonly pcode: number;
  readonly partition: string;
}

/** Slices of `streams`, of the projects `pcodes` (null: every project), ordered. */
export async function readStreamPartitions(
  sql: SqlHandle,
  streams: readonly string[],
  pcodes: readonly number[] | null,
): Promise<StreamPartition[]> {
  const projects = pcodes ? pcodes.map(String) : null;
  const rows = await sql<{ stream: string; pcode: number; partition: string }[]>`
    SELECT DISTINCT "stream", "pcode"::float8 AS pcode, "partition" FROM (
      SELECT "stream", "pcode", "partition" FROM "sync_windows" WHERE "stream" = ANY(${streams as string[]}::text[])
      UNION SELECT "stream", "pcode", "partition" FROM "watermarks" WHERE "stream" = ANY(${streams as string[]}::text[])
    ) s
    WHERE ${projects}::bigint[] IS NULL OR "pcode" = ANY(${projects}::bigint[])
    ORDER BY "stream", pcode, "partition"`;
  return rows.map((r) => ({ stream: r.stream, pcode: r.pcode, partition: r.partition }));
}
