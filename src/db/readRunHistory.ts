// The latest runs for the report: what ran, how it ended, and its totals over every stream.
import type { SqlHandle } from "./exec.ts";
import { runAliveSql } from "./markInterruptedRuns.ts";

export interface RunHistoryEntry {
  readonly id: number;
  readonly command: string;
  readonly status: string;
  readonly startedAt: number;
  readonly finishedAt: number | null;
  /** For a `running` run: whether a live process still holds it (false: it died). */
  readonly alive: boolean;
  readonly windows: number;
  readonly rows: number;
  readonly failed: number;
  readonly truncated: number;
}

/** Newest first; totals summed from the per-stream counts a run stores when it finishes. */
export async function readRunHistory(sql: SqlHandle, limit: number): Promise<RunHistoryEntry[]> {
  const total = (key: string) => `coalesce((SELECT sum((v ->> '${key}')::float8) FROM jsonb_each(r."counts") e(k, v)), 0)::float8`;
  const rows = await sql.unsafe<RunHistoryEntry[]>(
    `SELECT "id"::float8 AS id, "command", "status",
       (extract(epoch from "started_at") * 1000)::float8 AS "startedAt", (extract(epoch from "finished_at") * 1000)::float8 AS "finishedAt",
       ${runAliveSql("r")} AS alive, ${total("windows")} AS windows, ${total("rows")} AS rows,
       ${total("failed")} AS failed, ${total("truncated")} AS truncated
     FROM "sync_runs" r ORDER BY "id" DESC LIMIT $1`,
    [limit],
  );
  return [...rows];
}
