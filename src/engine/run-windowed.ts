// One windowed stream of one project: its windows are fetched a few at a time, each written in
// one transaction with its ledger rows (with the other windows fetched meanwhile: group-commit.ts),
// and the watermark advances only over written windows (watermark.ts).
import { pipelined } from "../db/driver/exec.ts";
import { isTransientDbError } from "../db/driver/transient.ts";
import type { LockHandle } from "../db/driver/withAdvisoryLock.ts";
import { advanceWatermark } from "../db/ledger/advanceWatermark.ts";
import { markInFlight, type WindowKey } from "../db/ledger/windowsInFlight.ts";
import { ensureWritePartitions } from "../db/partitions/ensureWritePartitions.ts";
import type { TraceSpan } from "../tracing/tracer.ts";
import type { Window } from "../windows/types.ts";
import { dbStep, LockLostError, lockedWrite } from "./db-step.ts";
import { encodeEarly } from "./encode-early.ts";
import { describeShort, disposeLeaves, emptyWindowFetch, fetchWindow, type WindowFetch } from "./fetch-window.ts";
import { GroupCommit } from "./group-commit.ts";
import type { TargetPlan } from "./plan-target.ts";
import type { RefreshAlong } from "./refresh-rollups.ts";
import { serverNow } from "./server-clock.ts";
import { iso, onWindowFailure, TargetRun } from "./target-run.ts";
import { requestCounts, startWindowSpan } from "./trace.ts";
import { type EngineDeps, emptyCounts, type StreamCounts, type Target, targetFields, windowFields } from "./types.ts";
import { WatermarkTracker } from "./watermark.ts";
import { rowTimeBounds } from "./window-rows.ts";
import { type FetchedWindow, type WindowWrite, windowKey, writeWindows } from "./write-window.ts";

/** A windowed target under way: its run, counters and watermark. */
interface WindowedRun {
  readonly run: TargetRun;
  readonly plan: TargetPlan;
  readonly counts: StreamCounts;
  readonly marks: WatermarkTracker;
  /** Writes each fetched window, with those fetched while the previous write was under way. */
  readonly writer: GroupCommit<FetchedWindow, WindowWrite>;
  /** The run's notes of windows in flight (inFlightNotes). */
  readonly inFlight: InFlightNotes;
  /** The first short answer was said (naming the echo); later ones go to debug. */
  shortSaid: boolean;
  /** Windows written, deferred or recorded failed (progress counts them done). */
  settled: number;
}

/** Notes of windows in flight, each resolved once its window's note is committed. */
export type InFlightNotes = GroupCommit<WindowKey, void>;

/**
 * A run's notes of windows in flight (db/ledger/windowsInFlight.ts), shared by its targets: the
 * notes of windows that start while one is being written go together in one statement and one
 * commit (group-commit.ts), about five a statement in the bench's backfill (docs/benchmarks.md).
 * Only the database fails a note: a failed one is not tried again note by note.
 */
export function inFlightNotes(deps: EngineDeps, runId: number | null): InFlightNotes {
  return new GroupCommit<WindowKey, void>(
    async (keys) => {
      await dbStep(deps, "the notes of windows in flight", () => markInFlight(deps.database.sql, keys, runId));
      return keys.map(() => undefined);
    },
    () => false,
  );
}

/** Runs one target's planned windows; returns its counters. Window failures are counted, not thrown. */
export async function runWindowedTarget(
  deps: EngineDeps,
  target: Target,
  plan: TargetPlan,
  runId: number | null,
  abort: AbortController,
  { lock, span, along, inFlight }: { lock?: LockHandle; span?: TraceSpan; along?: RefreshAlong | undefined; inFlight: InFlightNotes },
): Promise<StreamCounts> {
  const run = new TargetRun(deps, target, runId, abort, lock, span);
  const track = along?.track(target);
  const marks = new WatermarkTracker(plan.ledger, plan.watermark, plan.startMs);
  const state: WindowedRun = {
    run,
    plan,
    counts: emptyCounts(),
    marks,
    writer: new GroupCommit((windows) => commitWindows(run, marks, windows), writtenAlone),
    inFlight,
    shortSaid: false,
    settled: 0,
  };
  // A few windows at a time, each taken from the lazy plan when a worker is free: a plan of years
  // is never held, and a stop leaves the rest of it unread.
  const windows = plan.windows()[Symbol.iterator]();
  const worker = async () => {
    for (let next = windows.next(); !next.done && !run.stopped; next = windows.next()) {
      track?.taken(next.value);
      await runWindow(state, next.value).finally(() => track?.settled(next.value));
    }
  };
  await Promise.all(Array.from({ length: deps.config.sync.windowConcurrency }, worker));
  // Windows a stop or a lost lock left unfetched are no longer part of the run's plan.
  deps.progress?.planned(target.op.id, state.settled - plan.count);
  const final = state.marks.catchUp();
  if (final !== null)
    await lockedWrite(deps, lock, run.label, (tx) => advanceWatermark(tx, target.op.id, target.pcode, target.partition, final));
  return state.counts;
}

/** Fetches one window and writes it, or records why it could not; its answers are freed either way. */
async function runWindow(state: WindowedRun, w: Window): Promise<void> {
  // Created here so that the requests of a window that fails are counted too.
  const fetched = emptyWindowFetch();
  const span = startWindowSpan(state.run.deps, state.run.target, w, state.run.span);
  try {
    await fetchAndWrite(state, w, fetched, span);
  } finally {
    span.setAttributes({ ...requestCounts(fetched), "apm.splits": fetched.splits, "apm.leaves": fetched.leaves.length });
    span.end();
    disposeLeaves(fetched);
  }
}

async function fetchAndWrite(state: WindowedRun, w: Window, fetched: WindowFetch, span: TraceSpan): Promise<void> {
  const { run, counts } = state;
  const { deps, target } = run;
  const crashes = state.plan.crashed.get(w.start);
  if (crashes !== undefined) return failed(state, w, new CrashedWindowError(target, w, crashes), fetched, span);
  // Noted before anything of the window is held (pipelined with its request, and with the notes of
  // the windows starting meanwhile): a crash while it is in flight is counted at the next run's
  // start (db/ledger/windowsInFlight.ts).
  const marked = pipelined(state.inFlight.submit(windowKey(target, w)));
  // Its partitions are made while it is fetched (before its transaction: making one locks the
  // table), for the months of the window asked for only (a row beyond them is quarantined:
  // window-rows.ts). Made after the answers, a run's first windows waited for them (docs/benchmarks.md).
  const partitions = pipelined(
    dbStep(deps, `the partitions of ${run.label}`, () =>
      ensureWritePartitions(deps.database.sql, target.stream.table, rowTimeBounds(target.stream.table, w).months),
    ),
  );
  try {
    const signals = { signal: run.signal, stopWaits: deps.stopping, serverNow: () => serverNow(deps), span };
    await fetchWindow(deps.client, target, w, fetched, signals);
    await marked;
  } catch (e) {
    addRequests(counts, fetched);
    return failed(state, w, e, fetched, span);
  }
  addRequests(counts, fetched);
  // Answered for none of it: nothing is recorded, the window's earlier rows stay.
  if (fetched.leaves.length === 0) return deferShort(state, w, fetched, 0, span);
  let written: WindowWrite;
  try {
    const early = await encodeEarly(target, w, fetched, run.runId);
    await partitions;
    written = await state.writer.submit({ window: w, fetched, early });
  } catch (e) {
    return failed(state, w, e, fetched, span);
  }
  span.setAttributes({
    "apm.outcome": "done",
    "apm.rows": written.rows,
    "apm.quarantined": written.quarantined,
    "apm.truncated": written.truncated,
  });
  countWritten(state, w, fetched, written, span);
}

/** One transaction of fetched windows; only after its commit do they count for later watermark computations. */
async function commitWindows(run: TargetRun, marks: WatermarkTracker, windows: readonly FetchedWindow[]): Promise<WindowWrite[]> {
  const written = windows.map(({ window, fetched }) => ({ window, leaves: fetched.leaves }));
  let watermark: number | null = null;
  const writes = await lockedWrite(run.deps, run.lock, run.label, (tx) =>
    writeWindows(tx, run.target, windows, run.runId, () => {
      watermark = marks.propose(written);
      return watermark;
    }),
  );
  for (const w of written) marks.committed(w.window, w.leaves, watermark);
  return writes;
}

/** A failed transaction of several windows is tried window by window, unless the database or the lock failed it. */
function writtenAlone(e: unknown): boolean {
  const cause = e instanceof Error ? e.cause : undefined;
  return !(e instanceof LockLostError || isTransientDbError(e) || isTransientDbError(cause));
}

function addRequests(counts: StreamCounts, fetched: WindowFetch): void {
  counts.requests += fetched.requests;
  counts.retries += fetched.retries;
}

async function failed(state: WindowedRun, w: Window, e: unknown, fetched: WindowFetch, span: TraceSpan): Promise<void> {
  const outcome = await onWindowFailure(state.run, w, e, fetched, span);
  if (outcome === "lock-lost") state.counts.skipped = 1;
  if (outcome !== "failed") return;
  state.settled += 1;
  state.counts.failed += 1;
  state.counts.windows += 1;
}

function countWritten(state: WindowedRun, w: Window, fetched: WindowFetch, written: WindowWrite, span: TraceSpan): void {
  const { run, counts } = state;
  const { deps, target } = run;
  counts.windows += 1;
  counts.rows += written.rows;
  counts.quarantined += written.quarantined;
  counts.truncated += written.truncated;
  counts.textReplaced += written.replaced;
  counts.splits += fetched.splits;
  if (written.truncated > 0)
    deps.logger.warn(
      { ...targetFields(target), ...windowFields(w) },
      `${run.label}: window ${iso(w.start)}..${iso(w.end)} still truncated at 5 minutes; stored what came`,
    );
  deps.metrics?.window(target, "done", written);
  if (fetched.short) {
    deferShort(state, w, fetched, written.rows, span);
    return;
  }
  state.settled += 1;
  deps.progress?.windowDone(target.op.id, written.rows);
}

/** A window a sync no longer fetches by itself: it was in flight each time the process stopped. */
class CrashedWindowError extends Error {
  constructor(target: Target, w: Window, crashes: number) {
    const range = `--from ${iso(w.start)} --to ${iso(w.end)}`;
    const which = `--streams ${target.op.id} --projects ${target.pcode}`;
    super(
      `this window was in flight each of the last ${crashes} times the process stopped without finishing: a sync no longer fetches it, so that it cannot stop the others. ` +
        `Fetch it alone with \`apm-sync backfill ${which} ${range}\` (if memory ran out, lower APM_CONCURRENCY or APM_MEMORY_BUDGET first), or let a sync try again after \`apm-sync reset ${which} ${range}\``,
    );
    this.name = "CrashedWindowError";
  }
}

/**
 * A window answered for less than was asked: what it covered is recorded, the rest is left ahead
 * of the watermark for the next run. Said once per target (naming the echo), then at debug level.
 */
function deferShort(state: WindowedRun, w: Window, fetched: WindowFetch, rows: number, span: TraceSpan): void {
  const { run, counts } = state;
  const { deps, target } = run;
  span.setAttributes({ "apm.outcome": "deferred" });
  counts.deferred += 1;
  const kept =
    fetched.leaves.length > 0 ? `recorded ${iso(fetched.leaves[0]!.start)}..${iso(fetched.leaves.at(-1)!.end)}` : "nothing recorded";
  const line = `${run.label}: window ${iso(w.start)}..${iso(w.end)} answered for less (${describeShort(fetched.short!)}); ${kept}, the rest is left for the next run`;
  deps.logger[state.shortSaid ? "debug" : "warn"]({ ...targetFields(target), ...windowFields(w) }, line);
  state.shortSaid = true;
  state.settled += 1;
  deps.progress?.windowDone(target.op.id, rows);
  deps.metrics?.window(target, "deferred");
}
