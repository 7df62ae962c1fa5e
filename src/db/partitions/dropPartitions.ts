// Drops whole monthly partitions (`prune`: the disk comes back at once, no row-by-row delete) and
// records in the ledger the windows whose rows went with them, in one transaction.
import type postgres from "postgres";
import { execute, toDate } from "../driver/exec.ts";
import { type ArchiveRow, recordArchive } from "../ledger/archives.ts";
import { prunableWindows, quoteIdent, type Statement } from "../sqlText.ts";
import { lockPartitions } from "./lockPartitions.ts";
import { partitionCache } from "./partitionCache.ts";
import { partitionName } from "./partitionName.ts";
import { readPartitionNames } from "./readPartitionNames.ts";

/** A partition gained or lost rows after it was archived: nothing was dropped. */
export const ARCHIVE_STALE = "apm-archive-stale";

/**
 * Drops the partitions `names` of `table` (those still attached: another `prune` may have been
 * first) and marks `pruned` the ledger windows of `streams` that start before `until` (the end of
 * the newest of them): their rows are gone, so the time is accounted for, never fetched again.
 * Returns the partitions dropped and the windows marked. `before` runs first, in the same
 * transaction: what must be kept of the rows before they go (the rollups read from them).
 *
 * DROP takes ACCESS EXCLUSIVE on the table: it waits for the windows in flight, and the writes and
 * queries behind it wait for it. A long BI query could stall them all, so the wait is bounded
 * (LIMIT_SQLSTATE.LOCK_NOT_AVAILABLE after `lockTimeoutMs`, nothing changed). The partition lock of
 * ensurePartitions is taken first, so a partition is never made and dropped at once.
 *
 * `archived`: the Parquet files written of these partitions (src/warehouse/archive/). Each one's
 * rows are counted again under the lock (a write since would be lost: then nothing is dropped),
 * recorded in `archives`, and the windows of its month are marked `archived` instead of `pruned`.
 */
export async function dropPartitions(
  sql: postgres.Sql,
  table: string,
  names: readonly string[],
  streams: readonly string[],
  until: number,
  lockTimeoutMs = 10_000,
  before: readonly Statement[] = [],
  archived: readonly ArchiveRow[] = [],
): Promise<{ dropped: string[]; windows: number }> {
  const result = await sql.begin(async (tx) => {
    await tx.unsafe(`SET LOCAL lock_timeout = ${Math.max(1, Math.round(lockTimeoutMs))}`);
    await lockPartitions(tx, table);
    const attached = await readPartitionNames(tx, table);
    const dropped = names.filter((n) => attached.has(n));
    const files = archived.filter((a) => dropped.includes(partitionName(table, a.month)));
    for (const a of files) {
      const [now] = await tx.unsafe<{ n: number }[]>(`SELECT count(*)::float8 AS n FROM ${quoteIdent(partitionName(table, a.month))}`);
      if (now!.n !== a.rows)
        throw Object.assign(new Error(`${a.path}: the partition holds ${now!.n} row(s) now, ${a.rows} were archived`), {
          code: ARCHIVE_STALE,
        });
    }
    if (dropped.length > 0) {
      for (const statement of before) await execute(tx, statement);
      await tx.unsafe(`DROP TABLE ${dropped.map(quoteIdent).join(", ")}`);
    }
    let marked = 0;
    for (const a of files) marked += await recordArchive(tx, a, streams);
    const where = prunableWindows(streams, toDate(until));
    if (streams.length > 0)
      marked += await execute(tx, {
        ...where,
        text: `UPDATE "sync_windows" SET "status" = 'pruned', "gone_from" = "status" WHERE ${where.text}`,
      });
    return { dropped, windows: marked };
  });
  // This process must not trust its memory of them any more (db/partitions/partitionCache.ts).
  if (result.dropped.length > 0) partitionCache(sql, table).forget();
  return result;
}
