// After a run's windows (or a worker's job): the rollups' marked buckets are recomputed once, for
// the whole run, instead of in each window's transaction (db/rollups/refresh.ts), a day at a time,
// shown in the progress ("refreshing rollups: N/M days"). Skipped on a stop; stopped between days
// by one, and the day in flight cancelled when the shutdown grace is over: the views are exact
// meanwhile, the marks of the days left stay, and the next run refreshes them. A refresh that
// fails (past the database step's retries) fails nothing: the run's data and ledger are committed,
// its marks stay, and the views read marked buckets from the raw rows; a warning says so. (A
// worker's job used to throw, and be run again, for it.)
import { refreshRollups } from "../db/rollups/refresh.ts";
import { MARKS_TABLE } from "../db/rollups/spec.ts";
import { rollupWriter } from "../db/views.ts";
import { dbStep } from "./db-step.ts";
import type { EngineDeps } from "./types.ts";

/** Marked hours from which the refresh is worth a line at info level (a backfill's), not debug. */
const LONG_REFRESH_HOURS = 24 * 7;

export async function refreshAfterRun(deps: EngineDeps): Promise<void> {
  if (deps.stopping?.aborted) return;
  try {
    await refresh(deps);
  } catch (e) {
    const why = e instanceof Error ? e.message : String(e);
    deps.logger.warn(
      { error: why },
      `rollups not refreshed: ${why}. The data is stored and the views stay exact (marked buckets are read from the raw rows); the next run or scheduled tick refreshes them`,
    );
  }
}

async function refresh(deps: EngineDeps): Promise<void> {
  const t0 = performance.now();
  const sql = deps.database.sql;
  const [marked] = await dbStep(deps, "the rollups' marks", () => sql<{ n: number }[]>`SELECT count(*)::int AS n FROM ${sql(MARKS_TABLE)}`);
  const level = (marked?.n ?? 0) >= LONG_REFRESH_HOURS ? "info" : "debug";
  if (level === "info") deps.logger.info({ marked: marked!.n }, `refreshing the rollups of ${marked!.n} marked hour(s) ...`);
  const r = await dbStep(deps, "the rollups' refresh", () =>
    refreshRollups(sql, rollupWriter, {
      stopping: deps.stopping,
      hardStop: deps.hardStop,
      progress: (done, total) => deps.progress?.refreshing(done, total),
    }),
  );
  const hours = Object.values(r.hours).reduce((a, b) => a + b, 0);
  const seconds = Math.round((performance.now() - t0) / 100) / 10;
  if (r.stopped)
    deps.logger.info(
      { hours, days: r.days, totalDays: r.total, seconds },
      `rollups' refresh stopped by a signal after ${r.days}/${r.total} days (${seconds} s): the marks of the days left are kept and the views stay exact; the next run refreshes them`,
    );
  else if (hours > 0 || r.busy.length > 0)
    deps.logger[level](
      { hours, busy: r.busy, seconds },
      `rollups refreshed: ${hours} hour(s) in ${seconds} s${r.busy.length > 0 ? `; ${r.busy.join(", ")} being refreshed by another process` : ""}`,
    );
}
