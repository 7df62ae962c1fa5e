// A successful capture of a snapshot stream supersedes its earlier failed captures: the ledger
// then says "failed" only for what is still missing.
import { isoTime, type SqlHandle } from "../driver/exec.ts";

export async function clearFailedCaptures(
  sql: SqlHandle,
  stream: string,
  pcode: number,
  partition: string,
  before: Date | number,
): Promise<number> {
  const result = await sql`
    DELETE FROM "sync_windows"
    WHERE "stream" = ${stream} AND "pcode" = ${pcode}::bigint AND "partition" = ${partition}
      AND "status" = 'failed' AND "window_end" <= ${isoTime(before)}::timestamptz`;
  return result.count;
}
