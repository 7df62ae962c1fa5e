// Closes a sync_runs row.
import type { SqlHandle } from "./exec.ts";

export type RunStatus = "ok" | "failed" | "partial" | "interrupted" | "cancelled";

/** Sets finished_at = now(), the status and the per-stream counts of a run. */
export async function finishRun(
  sql: SqlHandle,
  runId: number,
  status: RunStatus,
  counts: Readonly<Record<string, unknown>> = {},
): Promise<void> {
  await sql`
    UPDATE "sync_runs" SET "finished_at" = now(), "status" = ${status}, "counts" = ${JSON.stringify(counts)}::text::jsonb
    WHERE "id" = ${runId}::bigint`;
}
