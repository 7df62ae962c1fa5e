// After a run's windows (or a worker's job): the rollups' marked buckets are recomputed once, for
// the whole run, instead of in each window's transaction (db/rollups/refresh.ts). Skipped on a
// stop: the views are exact meanwhile, and the next run refreshes.
import { refreshRollups } from "../db/rollups/refresh.ts";
import { rollupWriter } from "../db/views.ts";
import { dbStep } from "./db-step.ts";
import type { EngineDeps } from "./types.ts";

export async function refreshAfterRun(deps: EngineDeps): Promise<void> {
  if (deps.stopping?.aborted) return;
  const t0 = performance.now();
  const r = await dbStep(deps, "the rollups' refresh", () => refreshRollups(deps.database.sql, rollupWriter));
  const hours = Object.values(r.hours).reduce((a, b) => a + b, 0);
  if (hours > 0 || r.busy.length > 0)
    deps.logger.debug(
      { hours, busy: r.busy, ms: Math.round(performance.now() - t0) },
      `rollups refreshed: ${hours} hour(s)${r.busy.length > 0 ? `; ${r.busy.join(", ")} being refreshed by another process` : ""}`,
    );
}
