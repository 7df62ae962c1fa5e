// A run killed mid-way (kill -9, OOM, node crash) leaves its sync_runs row `running`. Every run
// holds a session advisory lock on its own id while it works (withAdvisoryLock("sync_runs", id));
// a `running` row whose lock nobody holds belongs to a process that is gone.
import type { SqlHandle } from "../driver/exec.ts";
import { sessionLockHeld } from "../driver/lockKeys.ts";

/** SQL predicate: the run `<alias>.id` is still held by a live session. */
export function runAliveSql(alias: string): string {
  return sessionLockHeld("'sync_runs'", `${alias}."id"::text`);
}

/**
 * Marks dead `running` runs `interrupted`; returns how many. A run takes its lock before it
 * inserts its row (engine/recorded-run.ts), so a `running` row without its lock is a dead run
 * however young. A scheduled tick's row (inserted and finished at once, without a lock) is given
 * a few seconds.
 */
export async function markInterruptedRuns(sql: SqlHandle): Promise<number> {
  const result = await sql.unsafe(
    `UPDATE "sync_runs" r SET "status" = 'interrupted', "finished_at" = coalesce(r."finished_at", now())
     WHERE r."status" = 'running' AND NOT ${runAliveSql("r")}
       AND (r."command" <> 'schedule' OR r."started_at" < now() - interval '10 seconds')`,
  );
  return result.count;
}
