// A run as the warehouse records it (sync_runs): started, held by its lock while it works (a
// `running` row without the lock is a run that died), finished with its status and counts.

import { type LockHandle, withAdvisoryLock } from "../db/driver/withAdvisoryLock.ts";
import { finishRun, type RunStatus } from "../db/ledger/finishRun.ts";
import { markInterruptedRuns } from "../db/ledger/markInterruptedRuns.ts";
import { nextRunId, startRun } from "../db/ledger/startRun.ts";
import { countCrashes } from "../db/ledger/windowsInFlight.ts";
import { setCurrentRun } from "../shutdown.ts";
import { packageVersion } from "../util/package-root.ts";
import { dbStep, retryTake } from "./db-step.ts";
import { describeError } from "./describe-error.ts";
import type { EngineDeps, StreamCounts } from "./types.ts";

/** What a recorded run ends with: its status and counts, and what the caller gets back. */
export interface RunOutcome<T> {
  readonly status: RunStatus;
  readonly counts: ReadonlyMap<string, StreamCounts>;
  /** Why a failed run failed when no window says it (the server unreachable). */
  readonly reason?: string | null;
  readonly value: T;
}

/**
 * Runs `fn` as one recorded run (a `sync`, a `backfill`, a `worker` process): runs that died are
 * marked interrupted, a sync_runs row is started and held by its lock while `fn` runs, then
 * finished with `fn`'s status and counts, or `failed` when it throws. The last-resort handler
 * marks it failed too.
 */
export async function withRun<T>(
  deps: EngineDeps,
  command: string,
  args: Readonly<Record<string, unknown>>,
  fn: (runId: number) => Promise<RunOutcome<T>>,
): Promise<T> {
  const { sql } = deps.database;
  const runId = await beginRun(deps);
  const started = performance.now();
  // The lock first, then the row: a `running` row without its lock is always a run that died.
  const held = await withAdvisoryLock(
    deps.database,
    "sync_runs",
    runId,
    async (lock) => {
      await dbStep(deps, "the run's start", () => startRun(sql, { command, args, version: packageVersion() }, runId));
      setCurrentRun({ mark: () => finishRun(sql, runId, "failed") });
      let outcome: RunOutcome<T>;
      try {
        outcome = await fn(runId);
      } catch (e) {
        await finish(deps, lock, runId, "failed", new Map(), describeError(e)).catch(() => {});
        deps.metrics?.run(command, "failed", performance.now() - started);
        throw e;
      }
      await finish(deps, lock, runId, outcome.status, outcome.counts, outcome.reason ?? null);
      deps.metrics?.run(command, outcome.status, performance.now() - started);
      return outcome.value;
    },
    retryTake(deps, "the run's lock"),
  ).finally(() => setCurrentRun(null));
  if (!held.acquired) throw new Error(`could not take the lock of run ${runId}`);
  return held.value;
}

/** Marks runs that died interrupted and counts their windows in flight; returns the new run's id. */
async function beginRun(deps: EngineDeps): Promise<number> {
  const { sql } = deps.database;
  const interrupted = await dbStep(deps, "the run's start", () => markInterruptedRuns(sql));
  if (interrupted > 0)
    deps.logger.warn(
      `${interrupted} earlier run(s) had stopped without finishing (marked interrupted); this run catches up on their windows`,
    );
  await dbStep(deps, "the run's start", () => countCrashes(sql));
  return dbStep(deps, "the run's start", () => nextRunId(sql));
}

/** A run's status from what its targets did. */
export function runStatus(result: {
  readonly cancelled: boolean;
  readonly failed: boolean;
  readonly unreachable?: string | null;
}): RunStatus {
  if (result.cancelled) return "cancelled";
  if (result.unreachable) return "failed";
  return result.failed ? "partial" : "ok";
}

/** Closes the run; after a database blip its lock is re-taken first, so no later run calls it dead. */
async function finish(
  deps: EngineDeps,
  lock: LockHandle,
  runId: number,
  status: RunStatus,
  totals: ReadonlyMap<string, StreamCounts>,
  reason: string | null = null,
) {
  await dbStep(deps, "the run's end", async () => {
    await lock.ensure();
    await finishRun(deps.database.sql, runId, status, Object.fromEntries(totals), reason);
  });
}
