// Closes a sync_runs row.
import type { SqlHandle } from "../driver/exec.ts";

export type RunStatus = "ok" | "failed" | "partial" | "interrupted" | "cancelled";

/** Key of `counts` that holds why a run failed (no stream id is a bare word). */
export const RUN_ERROR_KEY = "error";

/**
 * Sets finished_at = now(), the status and the per-stream counts of a run, and why it failed
 * when it did (under counts.error: the table has no column of its own for it, and the report,
 * which reads it, would otherwise say "failed" with no reason).
 */
export async function finishRun(
  sql: SqlHandle,
  runId: number,
  status: RunStatus,
  counts: Readonly<Record<string, unknown>> = {},
  reason: string | null = null,
): Promise<void> {
  const stored = reason === null ? counts : { ...counts, [RUN_ERROR_KEY]: reason };
  await sql`
    UPDATE "sync_runs" SET "finished_at" = now(), "status" = ${status}, "counts" = ${JSON.stringify(stored)}::text::jsonb
    WHERE "id" = ${runId}::bigint`;
}
