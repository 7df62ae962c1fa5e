// Watermarks only move forward (docs/design.md "Ledger and watermarks").
import { isoTime, type SqlHandle } from "../driver/exec.ts";

/**
 * Sets the watermark of (stream, pcode, partition) to GREATEST(current, newWatermark): a
 * backfill of older windows never moves it back. Returns the watermark after the call (epoch ms).
 * Run it in the transaction that wrote the window.
 */
export async function advanceWatermark(
  sql: SqlHandle,
  stream: string,
  pcode: number,
  partition: string,
  newWatermark: Date | number,
): Promise<number> {
  const [row] = await sql<{ ms: number }[]>`
    INSERT INTO "watermarks" ("stream", "pcode", "partition", "watermark")
    VALUES (${stream}, ${pcode}::bigint, ${partition}, ${isoTime(newWatermark)}::timestamptz)
    ON CONFLICT ("stream", "pcode", "partition") DO UPDATE
      SET "watermark" = GREATEST("watermarks"."watermark", EXCLUDED."watermark"), "updated_at" = now()
    RETURNING (extract(epoch from "watermark") * 1000)::float8 AS ms`.execute();
  return row!.ms;
}
