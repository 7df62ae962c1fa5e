// The monthly partitions a write of `table` needs, in the table and in its rollups (a bucket lies in
// the month of its rows), made before the write's transaction
// (db/partitions/ensurePartitions.ts).
import type postgres from "postgres";
import { ROLLUP_GRAINS, rollupOf, rollupTableName } from "../rollups/spec.ts";
import { ensurePartitions } from "./ensurePartitions.ts";

/** Makes the partitions of the months holding `months` (epoch ms), in `table` and its rollups. */
export async function ensureWritePartitions(sql: postgres.Sql, table: string, months: readonly number[]): Promise<void> {
  const spec = rollupOf(table);
  const rollups = spec ? ROLLUP_GRAINS.map((grain) => rollupTableName(spec, grain)) : [];
  for (const t of [table, ...rollups]) await ensurePartitions(sql, t, months);
}
