// What the metrics report per stream and project, read from the ledger at scrape or push time, so
// that any process (a worker, a cron `sync`) reports the warehouse's truth, not its own memory.
import type { SqlHandle } from "../../db/driver/exec.ts";

export interface StreamHealth {
  readonly stream: string;
  readonly pcode: number;
  /** Least advanced partition's watermark (epoch ms), as in the stream_freshness view; null before the first. */
  readonly watermark: number | null;
  /** When the latest done or truncated window was written (epoch ms); null before the first. */
  readonly lastSuccess: number | null;
  /** Windows whose latest attempt failed (they stay failed until a run writes them). */
  readonly failed: number;
  readonly truncated: number;
}

/** One row per stream and project found in the watermarks or the ledger. */
export async function readStreamHealth(sql: SqlHandle): Promise<StreamHealth[]> {
  const rows = await sql<Record<string, string | number | null>[]>`
    WITH "w" AS (
      SELECT "stream", "pcode", min("watermark") AS "watermark" FROM "watermarks" GROUP BY "stream", "pcode"
    ), "l" AS (
      SELECT "stream", "pcode",
        max("finished_at") FILTER (WHERE "status" <> 'failed') AS "last_success",
        count(*) FILTER (WHERE "status" = 'failed') AS "failed",
        count(*) FILTER (WHERE "status" = 'truncated') AS "truncated"
      FROM "sync_windows" GROUP BY "stream", "pcode"
    )
    SELECT "stream", "pcode"::float8 AS pcode,
      (extract(epoch from "w"."watermark") * 1000)::float8 AS watermark,
      (extract(epoch from "l"."last_success") * 1000)::float8 AS last_success,
      coalesce("l"."failed", 0)::float8 AS failed, coalesce("l"."truncated", 0)::float8 AS truncated
    FROM "w" FULL JOIN "l" USING ("stream", "pcode")
    ORDER BY "stream", "pcode"`;
  return rows.map((r) => ({
    stream: r.stream as string,
    pcode: r.pcode as number,
    watermark: r.watermark as number | null,
    lastSuccess: r.last_success as number | null,
    failed: r.failed as number,
    truncated: r.truncated as number,
  }));
}
