// Every view of the warehouse, defined once here and (re)created by `migrate` after the
// migrations, in one transaction: CREATE OR REPLACE keeps a view's columns (a view's columns never
// change name, type or order, so views users built on ours are kept). The migrations of earlier
// releases created them too; what they left is replaced here.
import { OPERATIONS } from "../catalogue/index.ts";
import type { SqlHandle } from "./driver/exec.ts";
import { ROLLUPS } from "./rollups/spec.ts";
import { rollupViews } from "./rollups/views.ts";

/** Per stream and project: how far the data reaches and what went wrong. */
const STREAM_FRESHNESS = `CREATE OR REPLACE VIEW "stream_freshness" AS
WITH "w" AS (
  SELECT "stream", "pcode", min("watermark") AS "watermark", max("updated_at") AS "watermark_updated_at"
  FROM "watermarks" GROUP BY "stream", "pcode"
), "l" AS (
  SELECT "stream", "pcode",
    max("window_end") FILTER (WHERE "status" IN ('done', 'truncated')) AS "last_window_end",
    max("finished_at") AS "last_finished_at",
    count(*) FILTER (WHERE "status" = 'done') AS "done_windows",
    count(*) FILTER (WHERE "status" = 'failed') AS "failed_windows",
    count(*) FILTER (WHERE "status" = 'truncated') AS "truncated_windows",
    coalesce(sum("quarantined"), 0) AS "quarantined_records"
  FROM "sync_windows" GROUP BY "stream", "pcode"
)
SELECT
  "stream",
  "pcode",
  "w"."watermark",
  now() - "w"."watermark" AS "lag",
  "w"."watermark_updated_at",
  "l"."last_window_end",
  "l"."last_finished_at",
  coalesce("l"."done_windows", 0) AS "done_windows",
  coalesce("l"."failed_windows", 0) AS "failed_windows",
  coalesce("l"."truncated_windows", 0) AS "truncated_windows",
  coalesce("l"."quarantined_records", 0) AS "quarantined_records"
FROM "w" FULL JOIN "l" USING ("stream", "pcode")`;

/**
 * What the ledger does not cover: failed windows, and holes of windowed streams (time no window
 * covers before the stream's latest window). A capture (a zero-length window) covers no time.
 */
const LEDGER_GAPS = `CREATE OR REPLACE VIEW "ledger_gaps" AS
WITH "ordered" AS (
  SELECT "stream", "pcode", "partition", "window_start",
    max("window_end") OVER (
      PARTITION BY "stream", "pcode", "partition" ORDER BY "window_start", "window_end"
      ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING
    ) AS "covered_until"
  FROM "sync_windows"
  WHERE "window_end" > "window_start"
)
SELECT "stream", "pcode", "partition", "covered_until" AS "gap_start", "window_start" AS "gap_end", 'hole' AS "kind", NULL::text AS "error"
FROM "ordered"
WHERE "covered_until" < "window_start"
UNION ALL
SELECT "stream", "pcode", "partition", "window_start", "window_end", 'failed', "error"
FROM "sync_windows"
WHERE "status" = 'failed'`;

/** The stream whose ledger says how much of a rollup's bucket is fetched: the one writing its table. */
export function rollupWriter(source: string): string | null {
  const writers = OPERATIONS.filter((op) => op.stream?.table === source);
  return writers.length === 1 ? writers[0]!.id : null;
}

/** The CREATE OR REPLACE VIEW statements of every view, in an order where each reads only tables. */
export function viewStatements(): string[] {
  return [...rollupViews(ROLLUPS, rollupWriter), STREAM_FRESHNESS, LEDGER_GAPS];
}

/** (Re)creates every view, in the caller's transaction. */
export async function createViews(sql: SqlHandle): Promise<void> {
  for (const text of viewStatements()) await sql.unsafe(text);
}
