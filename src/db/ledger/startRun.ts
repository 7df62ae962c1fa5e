// One sync_runs row per invocation.
import type { SqlHandle } from "../driver/exec.ts";

export interface RunStart {
  readonly command: string;
  /** Command arguments; never tokens. */
  readonly args?: Readonly<Record<string, unknown>>;
  readonly version?: string | null;
}

/**
 * The next run id, drawn before the run's row exists: the run takes its lock on it first
 * (engine/recorded-run.ts), so that no `running` row is ever seen without its lock.
 */
export async function nextRunId(sql: SqlHandle): Promise<number> {
  const [row] = await sql<{ id: string }[]>`SELECT nextval(pg_get_serial_sequence('sync_runs', 'id'))::text AS id`;
  return Number(row!.id);
}

/**
 * Inserts a `running` sync_runs row; returns its id: `id` (from nextRunId, the run holding its
 * lock already), else the next one (a run that ends at once: a scheduled tick).
 */
export async function startRun(sql: SqlHandle, run: RunStart, id?: number): Promise<number> {
  const [row] = await sql<{ id: string }[]>`
    INSERT INTO "sync_runs" ("id", "command", "args", "version")
    VALUES (coalesce(${id ?? null}::bigint, nextval(pg_get_serial_sequence('sync_runs', 'id'))), ${run.command},
      ${JSON.stringify(run.args ?? {})}::text::jsonb, ${run.version ?? null}::text)
    RETURNING "id"::text AS id`;
  return Number(row!.id);
}
