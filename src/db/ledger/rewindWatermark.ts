// The one way a watermark moves back: `reset` forgot windows below it, and the watermark must not
// claim they are there (the end of the first unbroken run of done windows is now before them).
// The engine only ever advances watermarks (advanceWatermark.ts).
import { isoTime, type SqlHandle } from "../driver/exec.ts";

/**
 * Sets the watermark of (stream, pcode, partition) to LEAST(current, `to`); returns it after the
 * call (epoch ms), or null when the slice has none. Run it in the reset's transaction.
 */
export async function rewindWatermark(
  sql: SqlHandle,
  stream: string,
  pcode: number,
  partition: string,
  to: Date | number,
): Promise<number | null> {
  const [row] = await sql<{ ms: number }[]>`
    UPDATE "watermarks" SET "watermark" = LEAST("watermark", ${isoTime(to)}::timestamptz), "updated_at" = now()
    WHERE "stream" = ${stream} AND "pcode" = ${pcode}::bigint AND "partition" = ${partition}
    RETURNING (extract(epoch from "watermark") * 1000)::float8 AS ms`.execute();
  return row ? row.ms : null;
}
