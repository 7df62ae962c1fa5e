// The read-this-first file of the engine: one run of `sync` or `backfill` (or a queued job's share).
//   1. account streams (sync only, with an account token): the lists, then the streams that fan
//      out over a list just written (the catalogue's `parent`, fan-out.ts);
//   2. the plan: the server's clock, then every project target's windows counted from its ledger,
//      so progress knows the whole run before the first project window is fetched;
//   3. every selected stream of every selected project, a few at a time (the database's stream
//      slots, shared by every run of the process: a worker's jobs too), each under its own
//      advisory lock; windowed streams plan again under the lock, snapshots capture once.
// Every window is written in one transaction with its ledger rows and watermark (write-window.ts).

import pLimit from "p-limit";
import { isWindowed, type OperationDef } from "../catalogue/types.ts";
import { withAdvisoryLock } from "../db/driver/withAdvisoryLock.ts";
import { type TraceSpan, traced } from "../tracing/tracer.ts";
import { childTargets, projectsWithoutToken } from "./account-targets.ts";
import { CredentialScope } from "./credentials.ts";
import { dbStep, retryTake } from "./db-step.ts";
import { describeError } from "./describe-error.ts";
import { accountTarget } from "./fan-out.ts";
import { noteHistory, planTarget } from "./plan-target.ts";
import { runStatus, withRun } from "./recorded-run.ts";
import { RefreshAlong, refreshAfterRun } from "./refresh-rollups.ts";
import { runSnapshotTarget } from "./run-snapshot.ts";
import { type InFlightNotes, inFlightNotes, runWindowedTarget } from "./run-windowed.ts";
import { selectWork, type Work } from "./select-work.ts";
import { noteDeferred, noteServerClock, plannerNow } from "./server-clock.ts";
import { noteCounts, noteRun, requestAttributes, targetAttributes, tracerOf } from "./trace.ts";
import {
  addToTotals,
  type EngineDeps,
  emptyCounts,
  type JobRequest,
  type RunMode,
  type StreamCounts,
  streamLockName,
  type Target,
  targetFields,
  targetLabel,
} from "./types.ts";
import { vacuumAfterRun } from "./vacuum-after-run.ts";

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
  /** Why the run stopped early when the server could not be reached (api/breaker.ts); null otherwise. */
  readonly unreachable: string | null;
  /** Backfill windows left out because the ledger has them complete (RunMode `onlyMissing`). */
  readonly complete: number;
}

export interface JobResult extends TargetsResult {
  readonly runId: number;
  readonly exitCode: 0 | 1;
}

export async function runJob(deps: EngineDeps, req: JobRequest): Promise<JobResult> {
  return traced(tracerOf(deps), `apm-sync ${req.command}`, requestAttributes(req), null, (span) =>
    withRun(deps, req.command, req.args ?? {}, async (runId) => {
      const result = await runTargets(deps, req, runId, span);
      await refreshAfterRun(deps);
      await vacuumAfterRun(deps);
      const exitCode = result.failed || result.cancelled || result.unreachable ? (1 as const) : (0 as const);
      return { status: runStatus(result), counts: result.streams, reason: result.unreachable, value: { ...result, runId, exitCode } };
    }),
  );
}

/** One run's targets at work: what they share, and what they add up to. */
interface RunState {
  readonly deps: EngineDeps;
  readonly mode: RunMode;
  readonly runId: number;
  /** The planner's now, fixed for the run at its first plan: planning again under a lock finds no new window. */
  plannerNow: number | null;
  /** Windows each target was counted with before the run started fetching. */
  readonly counted: Map<Target, number>;
  readonly totals: Map<string, StreamCounts>;
  readonly locked: string[];
  /** Windows the targets' plans left out as complete (a backfill's `onlyMissing`). */
  complete: number;
  /** The run's span (a queued job's): the targets' spans are its children. */
  readonly span: TraceSpan;
  /** The rollups' refresh along the fetch of the project targets. */
  along?: RefreshAlong;
  /** The notes of the windows in flight, written together across the targets. */
  readonly inFlight: InFlightNotes;
}

/**
 * Runs every target of a request under run `runId`; window failures are counted, not thrown.
 * Traced under `span`, or as a job of its own (a worker's process is one long run).
 */
export async function runTargets(deps: EngineDeps, req: JobRequest, runId: number, span?: TraceSpan): Promise<TargetsResult> {
  if (!span) return traced(tracerOf(deps), "apm-sync job", requestAttributes(req), null, (s) => runTargets(deps, req, runId, s));
  span.setAttributes({ "apm.run_id": runId });
  const work = selectWork(deps, req);
  // This run's breaker: a worker's next job may reconnect the client meanwhile.
  const breaker = deps.client.unreachable;
  const state: RunState = {
    deps,
    mode: req.mode,
    runId,
    plannerNow: null,
    counted: new Map(),
    totals: new Map(),
    locked: [],
    complete: 0,
    span,
    inFlight: inFlightNotes(deps, runId),
  };
  const skippedProjects = await runAccountStreams(state, work.account);
  if (work.project.length > 0) await countPlans(state, work.project);
  deps.progress?.allPlanned();
  state.along = new RefreshAlong(deps, work.project);
  try {
    await runProjectTargets(state, work);
  } finally {
    await state.along.stop();
  }
  noteDeferred(deps, state.totals);
  const failed = [...state.totals.values()].some((c) => c.failed > 0);
  const unreachable = breaker.aborted ? describeError(breaker.reason) : null;
  if (unreachable) deps.logger.error(unreachable);
  const cancelled = deps.stopping?.aborted === true;
  noteRun(span, state.totals, cancelled, unreachable);
  return { streams: state.totals, skippedProjects, locked: state.locked, cancelled, failed, unreachable, complete: state.complete };
}

/** The server's clock first (planning stops at its now), then each target's windows counted. */
async function countPlans(state: RunState, targets: readonly Target[]): Promise<void> {
  const { deps } = state;
  await noteServerClock(deps, state.mode);
  state.plannerNow = plannerNow(deps);
  // Planning reads the ledger on the pool and holds no stream lock: as many at once as the stream
  // slots, but not in them (a worker's jobs would plan only when others' writes let go of one).
  const limit = pLimit(deps.database.streams.concurrency);
  await Promise.all(
    targets.map((target) =>
      limit(async () => {
        const n = isWindowed(target.stream) ? (await plan(state, target)).count : 1;
        state.counted.set(target, n);
        deps.progress?.planned(target.op.id, n);
      }),
    ),
  );
}

function plan(state: RunState, target: Target) {
  state.plannerNow ??= plannerNow(state.deps);
  const now = state.plannerNow;
  return dbStep(state.deps, `planning ${targetLabel(target)}`, () => planTarget(state.deps, target, state.mode, now));
}

/** The account's lists, then their fan-out; returns the listed projects that have no token. */
async function runAccountStreams(state: RunState, ops: readonly OperationDef[]): Promise<number[]> {
  const { deps } = state;
  if (ops.length === 0) return [];
  if (!deps.config.api.accountToken) {
    if (state.mode.kind === "sync")
      deps.logger.info("no account token (APM_ACCOUNT_TOKEN): project list, groups and members are not synced");
    return [];
  }
  const abort = new AbortController();
  const lists = ops.filter((op) => !op.stream!.parent).map((op) => accountTarget(op));
  for (const t of lists) deps.progress?.planned(t.op.id, 1);
  for (const t of lists) await deps.database.streams(() => runTarget(state, t, abort));
  const children = await childTargets(deps, ops);
  await Promise.all(children.map((t) => deps.database.streams(() => runTarget(state, t, abort))));
  return projectsWithoutToken(deps);
}

/** The project targets, a few at a time; a project whose token is refused stops its own. */
async function runProjectTargets(state: RunState, work: Work): Promise<void> {
  const scopes = new Map(work.projects.map((pcode) => [pcode, new CredentialScope(state.deps, pcode)]));
  const { streams } = state.deps.database;
  await Promise.all(
    work.project.map((target) =>
      streams(async () => {
        const abort = scopes.get(target.pcode)!.controllerFor(target.op);
        if (!abort.signal.aborted) await runTarget(state, target, abort);
        else state.deps.progress?.planned(target.op.id, -counted(state, target));
      }).finally(() => state.along?.finished(target)),
    ),
  );
}

/** One target in its span. */
function runTarget(state: RunState, target: Target, abort: AbortController): Promise<void> {
  return traced(tracerOf(state.deps), target.op.id, targetAttributes(target), state.span, (span) => runLocked(state, target, abort, span));
}

/** One target under its advisory lock; another process holding it skips the target. */
async function runLocked(state: RunState, target: Target, abort: AbortController, span: TraceSpan): Promise<void> {
  const { deps } = state;
  const lockName = streamLockName(target.op.id, target.partition, target.pcode);
  const result = await withAdvisoryLock(
    deps.database,
    lockName,
    target.pcode,
    async (lock) => {
      if (!isWindowed(target.stream)) return runSnapshotTarget(deps, target, state.runId, abort, lock, span);
      const planned = await plan(state, target);
      state.complete += planned.complete;
      if (planned.history) noteHistory(deps, target, planned.history);
      // Under the lock the plan can only have shrunk (another run wrote some of it meanwhile).
      deps.progress?.planned(target.op.id, planned.count - counted(state, target));
      return runWindowedTarget(deps, target, planned, state.runId, abort, { lock, span, along: state.along, inFlight: state.inFlight });
    },
    retryTake(deps, `the lock of ${targetLabel(target)}`),
  );
  let counts = result.acquired ? result.value : null;
  if (!counts) {
    deps.logger.warn(
      targetFields(target),
      `${targetLabel(target)}: another run is writing this stream now; skipped (it will be caught up next run)`,
    );
    counts = { ...emptyCounts(), skipped: 1 };
    deps.progress?.planned(target.op.id, -counted(state, target));
  }
  if (counts.skipped) state.locked.push(targetLabel(target));
  noteCounts(span, counts);
  addToTotals(state.totals, target.op.id, counts);
}

/** Windows a target was planned with before it ran (1 for a capture). */
function counted(state: RunState, target: Target): number {
  return state.counted.get(target) ?? 1;
}
