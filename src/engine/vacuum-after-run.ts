// After a run (after its rollups' refresh, whose rewritten buckets are the run's churn too), and
// after a reset (the rows it dropped): the tables the process left dead rows in are vacuumed where
// no autovacuum runs, the embedded database (db/driver/embedded-vacuum.ts; a server's database
// does nothing). Skipped on a stop. A vacuum that fails fails nothing: the data is committed, and
// the next run that leaves dead rows in those tables vacuums them, the older dead rows with its own.
import type { EngineDeps } from "./types.ts";

/** A vacuum worth a line at info level, not debug; and the dead rows worth a line before it starts (a refetched month's). */
const LONG_VACUUM_MS = 1_000;
const MANY_DEAD_ROWS = 100_000;

export async function vacuumAfterRun(deps: EngineDeps): Promise<void> {
  if (deps.stopping?.aborted) return;
  const t0 = performance.now();
  try {
    const r = await deps.database.vacuum({
      stopping: deps.stopping,
      starting: (tables, deadRows) => {
        if (deadRows >= MANY_DEAD_ROWS)
          deps.logger.info({ tables, deadRows }, `vacuuming ${tables} table(s) holding ${deadRows} dead row(s) ...`);
      },
    });
    if (r.tables.length === 0) return;
    const ms = performance.now() - t0;
    deps.logger[ms >= LONG_VACUUM_MS ? "info" : "debug"](
      { tables: r.tables.length, deadRows: r.deadRows, seconds: Math.round(ms / 100) / 10 },
      `vacuumed ${r.tables.length} table(s) holding ${r.deadRows} dead row(s) (the embedded database has no autovacuum)`,
    );
  } catch (e) {
    const why = e instanceof Error ? e.message : String(e);
    deps.logger.warn({ error: why }, `vacuum failed: ${why}. The data is stored; a later run vacuums the tables again`);
  }
}
