// What `prune` keeps of the rollups as it drops months. The refresher runs first (prune.ts): no
// bucket of the dropped months stays marked, so the views read their materialised rows. A
// statistic's whole hours are read from its raw rows (spec.ts hoursFromRaw), so before its raw
// months are dropped, in the drop's transaction, their hours are written into the hourly table
// (where the hourly rollups' retention keeps them): the views show the same rows before and after.
import type postgres from "postgres";
import { toDate } from "../driver/exec.ts";
import { ensurePartitions } from "../partitions/ensurePartitions.ts";
import { quoteIdent as q, type Statement } from "../sqlText.ts";
import { ROLLUP_GRAINS, type RollupGrain, rollupOf, rollupTableName } from "./spec.ts";
import { bucketColumns, wholeHourRows } from "./sql.ts";

/** Month starts (epoch ms) each grain of the rollups keeps from; null: it keeps everything. */
export type RollupCut = Readonly<Record<RollupGrain, number | null>>;

/**
 * The statements that keep the rollups of raw `table`'s rows before `until` (its first month kept),
 * to run in the transaction that drops them; the rollups' partitions of `months` (those dropped)
 * that their retention keeps are made first. None for a table whose rollup keeps its own hours.
 */
export async function keepRollups(
  sql: postgres.Sql,
  table: string,
  months: readonly number[],
  until: number,
  cut: RollupCut,
): Promise<Statement[]> {
  const spec = rollupOf(table);
  if (!spec?.hoursFromRaw) return [];
  for (const grain of ROLLUP_GRAINS) {
    const from = cut[grain];
    await ensurePartitions(sql, rollupTableName(spec, grain), from === null ? months : months.filter((m) => m >= from));
  }
  const t = `h.${q(spec.time)}`;
  const rows = wholeHourRows(spec, `${t} >= coalesce($2::timestamptz, '-infinity') AND ${t} < $1::timestamptz`);
  const text = `INSERT INTO ${q(rollupTableName(spec, "hourly"))} (${bucketColumns(spec).map(q).join(", ")}) ${rows}`;
  return [{ text, params: [toDate(until).toISOString(), cut.hourly === null ? null : toDate(cut.hourly).toISOString()] }];
}
