// What `prune` keeps of the rollups as it drops months. The open days before the month the daily
// rollups keep from go with their days. A statistic's hours and open days are read from its raw
// rows (hoursFromRaw), so before its raw months are dropped, in the drop's transaction, their
// hours are written into the hourly table (where the hourly rollups' retention keeps them) and
// their open days into the daily table (a day the ledger never covered wholly, such as one a failed
// window left, stays open until then): the views show the same rows before and after.
import type postgres from "postgres";
import { ensurePartitions } from "./ensurePartitions.ts";
import { type SqlHandle, toDate } from "./exec.ts";
import { closeDays, keepHours } from "./rollupSql.ts";
import { OPEN_DAYS_TABLE, ROLLUP_GRAINS, type RollupGrain, rollupOf, rollupTableName } from "./rollups.ts";
import { quoteIdent, type Statement } from "./sqlText.ts";

/** Month starts (epoch ms) each grain of the rollups keeps from; null: it keeps everything. */
export type RollupCut = Readonly<Record<RollupGrain, number | null>>;

/** Drops the open days before `before` (the daily rollups' first month kept). */
export async function dropOpenDays(sql: SqlHandle, before: number | null): Promise<void> {
  if (before === null) return;
  await sql.unsafe(`DELETE FROM ${quoteIdent(OPEN_DAYS_TABLE)} WHERE "bucket_start" < $1::timestamptz`, [toDate(before).toISOString()]);
}

/**
 * The statements that keep the rollups of raw `table`'s rows before `until` (its first month kept),
 * to run in the transaction that drops them; the rollups' partitions of `months` (those dropped)
 * that their retention keeps are made first. None for a table whose rollup keeps its own hours.
 * `writers`: the streams writing the table (one for a rollup with a coverage, whose ledger it reads).
 */
export async function keepRollups(
  sql: postgres.Sql,
  table: string,
  writers: readonly string[],
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
  const end = toDate(until).toISOString();
  const hoursFrom = cut.hourly === null ? null : toDate(cut.hourly).toISOString();
  const close = spec.coverage ? [{ text: closeDays(spec, writers[0]!, "before"), params: [end] }] : [];
  return [...close, { text: keepHours(spec), params: [end, hoursFrom] }];
}
