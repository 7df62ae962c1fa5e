// The read-this-first file of the engine: one run of `sync` or `backfill`.
//   1. account streams (sync only, with an account token): projects, groups, then their members
//      and group projects, fanned out over what was just listed;
//   2. every selected stream of every selected project, a few at a time, each under its own
//      advisory lock; windowed streams plan from their ledger, snapshots capture once.
// Every window is written in one transaction with its ledger row and watermark (write-window.ts).
import pLimit from "p-limit";
import { finishRun, type RunStatus } from "../db/finishRun.ts";
import { markInterruptedRuns } from "../db/markInterruptedRuns.ts";
import { readLiveKeys } from "../db/readLiveKeys.ts";
import { startRun } from "../db/startRun.ts";
import { type LockHandle, withAdvisoryLock } from "../db/withAdvisoryLock.ts";
import { setCurrentRun } from "../shutdown.ts";
import { packageVersion } from "../util/package-root.ts";
import { CredentialScope, noteDeferred, noteServerClock } from "./credentials.ts";
import { dbStep } from "./db-step.ts";
import { runSnapshotTarget } from "./run-snapshot.ts";
import { runWindowedTarget } from "./run-windowed.ts";
import {
  accountTarget,
  backfillOperations,
  isAccountOperation,
  leftOutNote,
  projectTargets,
  selectOperations,
  selectProjects,
} from "./targets.ts";
import {
  addToTotals,
  type EngineDeps,
  emptyCounts,
  type RunMode,
  type StreamCounts,
  streamLockName,
  type Target,
  targetFields,
  targetLabel,
} from "./types.ts";

export interface JobRequest {
  readonly command: "sync" | "backfill";
  readonly mode: RunMode;
  readonly streams?: readonly string[] | null;
  readonly projects?: readonly number[] | null;
  /** Only this partition of each selected stream (a queued job's); default: every partition. */
  readonly partition?: string | null;
  /** Which parts run (default both): the account streams (sync only), the project streams. */
  readonly parts?: { readonly account: boolean; readonly projects: boolean };
  /** Recorded in sync_runs (never secrets). */
  readonly args?: Readonly<Record<string, unknown>>;
}

/** What the targets of a request did (a run's or a queued job's share of one). */
export interface TargetsResult {
  /** Counters per stream id, summed over projects. */
  readonly streams: ReadonlyMap<string, StreamCounts>;
  /** Projects of the account list that have no token configured. */
  readonly skippedProjects: readonly number[];
  /** Targets another process was writing (advisory lock held). */
  readonly locked: readonly string[];
  /** Stopped by SIGTERM/SIGINT before every window was fetched. */
  readonly cancelled: boolean;
  /** Some window or snapshot failed. */
  readonly failed: boolean;
}

export interface JobResult extends TargetsResult {
  readonly runId: number;
  readonly exitCode: 0 | 1;
}

export async function runJob(deps: EngineDeps, req: JobRequest): Promise<JobResult> {
  return withRun(deps, req.command, req.args ?? {}, async (runId) => {
    const result = await runTargets(deps, req, runId);
    const exitCode = result.failed || result.cancelled ? (1 as const) : (0 as const);
    return { status: runStatus(result), counts: result.streams, value: { ...result, runId, exitCode } };
  });
}

/** What a recorded run ends with: its status and counts, and what the caller gets back. */
export interface RunOutcome<T> {
  readonly status: RunStatus;
  readonly counts: ReadonlyMap<string, StreamCounts>;
  readonly value: T;
}

/**
 * Runs `fn` as one recorded run (a `sync`, a `backfill`, a `worker` process): runs that died are
 * marked interrupted, a sync_runs row is started and held by its lock while `fn` runs (a `running`
 * row without the lock is a run that died), then finished with `fn`'s status and counts, or
 * `failed` when it throws. The last-resort handler marks it failed too.
 */
export async function withRun<T>(
  deps: EngineDeps,
  command: string,
  args: Readonly<Record<string, unknown>>,
  fn: (runId: number) => Promise<RunOutcome<T>>,
): Promise<T> {
  const { sql } = deps.database;
  const runId = await beginRun(deps, command, args);
  const started = performance.now();
  setCurrentRun({ mark: () => finishRun(sql, runId, "failed") });
  const held = await withAdvisoryLock(deps.database, "sync_runs", runId, async (lock) => {
    let outcome: RunOutcome<T>;
    try {
      outcome = await fn(runId);
    } catch (e) {
      await finish(deps, lock, runId, "failed", new Map()).catch(() => {});
      deps.metrics?.run(command, "failed", performance.now() - started);
      throw e;
    }
    await finish(deps, lock, runId, outcome.status, outcome.counts);
    deps.metrics?.run(command, outcome.status, performance.now() - started);
    return outcome.value;
  }).finally(() => setCurrentRun(null));
  if (!held.acquired) throw new Error(`could not take the lock of run ${runId}`);
  return held.value;
}

/** Marks runs that died interrupted, then records a new one; returns its id. */
async function beginRun(deps: EngineDeps, command: string, args: Readonly<Record<string, unknown>>): Promise<number> {
  const { sql } = deps.database;
  const interrupted = await dbStep(deps, "the run's start", () => markInterruptedRuns(sql));
  if (interrupted > 0)
    deps.logger.warn(
      `${interrupted} earlier run(s) had stopped without finishing (marked interrupted); this run catches up on their windows`,
    );
  return dbStep(deps, "the run's start", () => startRun(sql, { command, args, version: packageVersion() }));
}

export function runStatus(result: Pick<TargetsResult, "cancelled" | "failed">): RunStatus {
  return result.cancelled ? "cancelled" : result.failed ? "partial" : "ok";
}

/** Runs every target of a request under run `runId`; window failures are counted, not thrown. */
export async function runTargets(deps: EngineDeps, req: JobRequest, runId: number): Promise<TargetsResult> {
  const inputs = deps.config.sync.inputs;
  const parts = req.parts ?? { account: true, projects: true };
  const ops = selectOperations(req.streams ?? deps.config.sync.streams, inputs);
  const projects = parts.projects ? selectProjects(deps.config, req.projects) : [];
  const { sql } = deps.database;
  const capturedAt = Math.floor(deps.now() / 1000) * 1000;
  const totals = new Map<string, StreamCounts>();
  const locked: string[] = [];
  const run = async (target: Target, abort: AbortController) => {
    const counts = await runLocked(deps, target, req.mode, runId, capturedAt, abort);
    if (counts.skipped) locked.push(targetLabel(target));
    addToTotals(totals, target.op.id, counts);
  };
  const backfill = req.mode.kind === "backfill";
  // Backfill fills time ranges: only windowed streams have one (coarse ones only when named).
  const chosen = req.mode.kind === "backfill" ? backfillOperations(deps.config, req.streams ?? null, req.mode) : { ops, leftOut: [] };
  const leftOut = leftOutNote(chosen.leftOut);
  if (leftOut) deps.logger.info({ streams: chosen.leftOut.map((op) => op.id) }, leftOut);
  const selected = chosen.ops;
  const ofPartition = (t: Target) => req.partition === undefined || req.partition === null || t.partition === req.partition;
  let skippedProjects: number[] = [];

  const accountOps = parts.account ? selected.filter(isAccountOperation) : [];
  if (accountOps.length > 0 && deps.config.api.accountToken) {
    const abort = new AbortController();
    for (const op of accountOps.filter((o) => !o.stream!.fanOut)) await run(accountTarget(op), abort);
    const limit = pLimit(4);
    // Each fan-out list is read once (group members and group projects share the groups).
    const fanOuts = accountOps.filter((o) => o.stream!.fanOut);
    const partitions = new Map<string, string[]>();
    for (const kind of new Set(fanOuts.map((o) => o.stream!.fanOut!))) partitions.set(kind, await fanOutPartitions(deps, kind));
    const fanned = fanOuts.map((op) => (partitions.get(op.stream!.fanOut!) ?? []).map((p) => accountTarget(op, p)));
    await Promise.all(fanned.flat().map((t) => limit(() => run(t, abort))));
    const listed = (await readLiveKeys(sql, "projects", "pcode")).map(Number);
    skippedProjects = listed.filter((p) => !deps.config.api.projects.some((c) => c.pcode === p));
    if (skippedProjects.length > 0)
      deps.logger.info(
        { pcodes: skippedProjects },
        `projects without a token in APM_PROJECTS (their monitoring data is skipped): ${skippedProjects.join(", ")}`,
      );
  } else if (accountOps.length > 0 && !backfill) {
    deps.logger.info("no account token (APM_ACCOUNT_TOKEN): project list, groups and members are not synced");
  }

  const projectOps = selected.filter((op) => !isAccountOperation(op));
  if (projects.length > 0 && projectOps.length > 0) {
    await noteServerClock(deps, req.mode);
    const limit = pLimit(STREAMS_AT_ONCE);
    await Promise.all(
      projects.flatMap((pcode) => {
        const scope = new CredentialScope(deps, pcode);
        return projectOps
          .flatMap((op) => projectTargets(op, pcode, inputs))
          .filter(ofPartition)
          .map((target) =>
            limit(() => {
              const abort = scope.controllerFor(target.op);
              return abort.signal.aborted ? Promise.resolve() : run(target, abort);
            }),
          );
      }),
    );
  }
  noteDeferred(deps, totals);
  const failed = [...totals.values()].some((c) => c.failed > 0);
  return { streams: totals, skippedProjects, locked, cancelled: deps.stopping?.aborted === true, failed };
}

async function runLocked(
  deps: EngineDeps,
  target: Target,
  mode: RunMode,
  runId: number,
  capturedAt: number,
  abort: AbortController,
): Promise<StreamCounts> {
  const result = await dbStep(deps, `the lock of ${targetLabel(target)}`, () =>
    withAdvisoryLock(deps.database, streamLockName(target.op.id, target.partition, target.pcode), target.pcode, (lock) =>
      target.op.windowLimitMs === null
        ? runSnapshotTarget(deps, target, runId, capturedAt, abort, lock)
        : runWindowedTarget(deps, target, mode, runId, abort, lock),
    ),
  );
  if (result.acquired) return result.value;
  deps.logger.warn(
    targetFields(target),
    `${targetLabel(target)}: another run is writing this stream now; skipped (it will be caught up next run)`,
  );
  return { ...emptyCounts(), skipped: 1 };
}

async function fanOutPartitions(deps: EngineDeps, kind: "project" | "group"): Promise<string[]> {
  if (kind === "project") return readLiveKeys(deps.database.sql, "projects", "pcode");
  const keys = await readLiveKeys(deps.database.sql, "groups", "group_key");
  // The group list masks its keys ("grp****ab12"): a masked key cannot be asked for.
  const masked = keys.filter((k) => k.includes("*"));
  if (masked.length > 0) deps.logger.info(`${masked.length} group key(s) are masked by the server; their members and projects are skipped`);
  return keys.filter((k) => !k.includes("*"));
}

/** Streams run at once: each holds a lock connection, so the pool (10) keeps room for writes. */
const STREAMS_AT_ONCE = 4;

/** Closes the run; after a database blip its lock is re-taken first, so no later run calls it dead. */
async function finish(deps: EngineDeps, lock: LockHandle, runId: number, status: RunStatus, totals: ReadonlyMap<string, StreamCounts>) {
  await dbStep(deps, "the run's end", async () => {
    await lock.ensure();
    await finishRun(deps.database.sql, runId, status, countsJson(totals));
  });
}

function countsJson(totals: ReadonlyMap<string, StreamCounts>): Record<string, StreamCounts> {
  return Object.fromEntries(totals);
}
