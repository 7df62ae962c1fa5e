// The planner's starting point for one stream.
import type { SqlHandle } from "../driver/exec.ts";

/** Watermark of (stream, pcode, partition) in epoch ms, or null before the first done window. */
export async function readWatermark(sql: SqlHandle, stream: string, pcode: number, partition = ""): Promise<number | null> {
  const [row] = await sql<{ ms: number }[]>`
    SELECT (extract(epoch from "watermark") * 1000)::float8 AS ms FROM "watermarks"
    WHERE "stream" = ${stream} AND "pcode" = ${pcode}::bigint AND "partition" = ${partition}`;
  return row ? row.ms : null;
}
