// Re-fetching a grain window replaces the ledger rows of its earlier sub-windows (splits differ
// from run to run), in the same transaction as the new rows.
import { isoTime, type SqlHandle } from "./exec.ts";

/** Deletes ledger rows of (stream, pcode, partition) lying inside [start, end); returns the count. */
export async function clearLedgerRange(
  sql: SqlHandle,
  stream: string,
  pcode: number,
  partition: string,
  start: Date | number,
  end: Date | number,
): Promise<number> {
  const result = await sql`
    DELETE FROM "sync_windows"
    WHERE "stream" = ${stream} AND "pcode" = ${pcode}::bigint AND "partition" = ${partition}
      AND "window_start" >= ${isoTime(start)}::timestamptz AND "window_end" <= ${isoTime(end)}::timestamptz`.execute();
  return result.count;
}
