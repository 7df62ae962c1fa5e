// One sync_runs row per invocation.
import type { SqlHandle } from "./exec.ts";

export interface RunStart {
  readonly command: string;
  /** Command arguments; never tokens. */
  readonly args?: Readonly<Record<string, unknown>>;
  readonly version?: string | null;
}

/** Inserts a `running` sync_runs row; returns its id. */
export async function startRun(sql: SqlHandle, run: RunStart): Promise<number> {
  const [row] = await sql<{ id: string }[]>`
    INSERT INTO "sync_runs" ("command", "args", "version")
    VALUES (${run.command}, ${JSON.stringify(run.args ?? {})}::text::jsonb, ${run.version ?? null}::text)
    RETURNING "id"::text AS id`;
  return Number(row!.id);
}
