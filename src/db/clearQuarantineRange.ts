// Re-fetching a window replaces the quarantined records it produced before (no duplicates).
import { isoTime, type SqlHandle } from "./exec.ts";

/** Deletes quarantine rows of (stream, pcode) whose window lies inside [start, end). */
export async function clearQuarantineRange(
  sql: SqlHandle,
  stream: string,
  pcode: number,
  start: Date | number,
  end: Date | number,
): Promise<number> {
  const result = await sql`
    DELETE FROM "quarantine"
    WHERE "stream" = ${stream} AND "pcode" = ${pcode}::bigint
      AND "window_start" >= ${isoTime(start)}::timestamptz AND "window_end" <= ${isoTime(end)}::timestamptz`.execute();
  return result.count;
}
