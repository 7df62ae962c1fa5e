// One windowed stream of one project: plan from the ledger, fetch windows with bounded
// concurrency, write each in one transaction, advance the watermark only over written windows.
import pLimit from "p-limit";
import { AuthError } from "../api/errors.ts";
import { advanceWatermark as writeWatermark } from "../db/advanceWatermark.ts";
import { readLedger } from "../db/readLedger.ts";
import { readOpenTimes } from "../db/readOpenTimes.ts";
import { readWatermark } from "../db/readWatermark.ts";
import type { LockHandle } from "../db/withAdvisoryLock.ts";
import { alignDown } from "../windows/grid.ts";
import type { Span } from "../windows/intervals.ts";
import {
  advanceWatermark,
  effectiveGrain,
  type LedgerWindow,
  planBackfill,
  planIncremental,
  type StreamPlanSpec,
  type Window,
} from "../windows/plan.ts";
import { plannerNow } from "./credentials.ts";
import { dbStep, LockLostError, lockedWrite } from "./db-step.ts";
import { describeError } from "./describe-error.ts";
import { describeShort, emptyWindowFetch, fetchWindow, type Leaf, type WindowFetch } from "./fetch-window.ts";
import { configuredGrain } from "./targets.ts";
import {
  type EngineDeps,
  emptyCounts,
  type RunMode,
  type StreamCounts,
  type Target,
  targetFields,
  targetLabel,
  windowFields,
} from "./types.ts";
import { recordFailedWindow, writeWindow } from "./write-window.ts";

/** Planner inputs of a target: catalogue defaults, overridden by config. */
export function planSpec(deps: EngineDeps, target: Target): StreamPlanSpec {
  const { sync } = deps.config;
  const { op, stream } = target;
  return {
    grainMs: configuredGrain(deps.config, op),
    limitMs: op.windowLimitMs,
    // Streams whose rows stay open (events) use the configured event lookback (default 24 h).
    lookbackMs: stream.reReadOpen ? sync.eventLookbackMs : (stream.lookbackMs ?? sync.lookbackMs),
    settleMs: sync.settleMs,
    startMs: sync.startMs,
  };
}

/** Plans the windows of a target without fetching (also used by `backfill --dry-run`). */
export async function planTarget(
  deps: EngineDeps,
  target: Target,
  mode: RunMode,
): Promise<{ windows: Window[]; ledger: LedgerWindow[]; watermark: number | null }> {
  const { sql } = deps.database;
  const spec = planSpec(deps, target);
  const entries = await readLedger(sql, { stream: target.op.id, pcode: target.pcode, partition: target.partition });
  const ledger = entries.map((e) => ({ start: e.windowStart, end: e.windowEnd, status: e.status }));
  const watermark = await readWatermark(sql, target.op.id, target.pcode, target.partition);
  const now = plannerNow(deps);
  if (mode.kind === "backfill") return { windows: planBackfill(spec, mode.from, mode.to, ledger, { now }), ledger, watermark };
  const open = await openRanges(deps, target, spec, now);
  return { windows: planIncremental(spec, ledger, watermark, now, open), ledger, watermark };
}

async function openRanges(deps: EngineDeps, target: Target, spec: StreamPlanSpec, now: number): Promise<Span[]> {
  const rule = target.stream.reReadOpen;
  if (!rule) return [];
  const grain = effectiveGrain(spec);
  const times = await readOpenTimes(
    deps.database.sql,
    target.stream.table,
    rule.timeColumn,
    rule.openCondition,
    target.pcode,
    now - deps.config.sync.openEventLookbackMs,
  );
  const starts = [...new Set(times.map((t) => alignDown(t, grain)))];
  return starts.map((start) => ({ start, end: start + grain }));
}

/** Runs one target; returns its counters. Throws nothing for window failures (they are counted). */
export async function runWindowedTarget(
  deps: EngineDeps,
  target: Target,
  mode: RunMode,
  runId: number | null,
  abort: AbortController,
  lock?: LockHandle,
): Promise<StreamCounts> {
  const counts = emptyCounts();
  const {
    windows,
    ledger: initial,
    watermark,
  } = await dbStep(deps, `planning ${targetLabel(target)}`, () => planTarget(deps, target, mode));
  const label = targetLabel(target);
  deps.progress?.planned(target.op.id, windows.length);
  let ledger = initial;
  let current = watermark;
  const startMs = planSpec(deps, target).startMs;
  const withLeaves = (base: readonly LedgerWindow[], w: Span, leaves: readonly Leaf[]): LedgerWindow[] => [
    ...base.filter((e) => e.start < w.start || e.end > w.end),
    ...leaves.map((l) => ({ start: l.start, end: l.end, status: l.truncated ? ("truncated" as const) : ("done" as const) })),
  ];

  // A window answered for less than was asked: what it covered is recorded, the rest is left
  // ahead of the watermark for the next run. Said once per target (naming the echo), then debug.
  let shortSaid = false;
  const deferShort = (w: Span, fetched: WindowFetch, rows = 0) => {
    counts.deferred += 1;
    const kept =
      fetched.leaves.length > 0 ? `recorded ${iso(fetched.leaves[0]!.start)}..${iso(fetched.leaves.at(-1)!.end)}` : "nothing recorded";
    const line = `${label}: window ${iso(w.start)}..${iso(w.end)} answered for less (${describeShort(fetched.short!)}); ${kept}, the rest is left for the next run`;
    deps.logger[shortSaid ? "debug" : "warn"]({ ...targetFields(target), ...windowFields(w) }, line);
    shortSaid = true;
    deps.progress?.windowDone(target.op.id, rows);
    deps.metrics?.window(target, "deferred");
  };

  const limit = pLimit(deps.config.sync.windowConcurrency);
  await Promise.all(
    windows.map((w) =>
      limit(async () => {
        if (abort.signal.aborted || deps.stopping?.aborted) return;
        // Created here so that the requests of a window that fails are counted too.
        const fetched = emptyWindowFetch();
        let counted = false;
        const countRequests = () => {
          if (counted) return;
          counted = true;
          counts.requests += fetched.requests;
          counts.retries += fetched.retries;
        };
        try {
          const signal = deps.hardStop ? AbortSignal.any([abort.signal, deps.hardStop]) : abort.signal;
          await fetchWindow(deps.client, target, w, fetched, { signal, stopWaits: deps.stopping });
          countRequests();
          // Answered for none of it: nothing is recorded, the window's earlier rows stay.
          if (fetched.leaves.length === 0) return deferShort(w, fetched);
          let next: number | null = null;
          const written = await lockedWrite(deps, lock, label, (tx) =>
            writeWindow(tx, target, w, fetched, runId, (leaves) => {
              next = advanceWatermark(current, startMs, withLeaves(ledger, w, leaves));
              return next !== null && (current === null || next > current) ? next : null;
            }),
          );
          // Only after the commit does this window count for later watermark computations.
          ledger = withLeaves(ledger, w, fetched.leaves);
          if (next !== null && (current === null || next > current)) current = next;
          counts.windows += 1;
          counts.rows += written.rows;
          counts.quarantined += written.quarantined;
          counts.truncated += written.truncated;
          counts.textReplaced += written.replaced;
          counts.splits += fetched.splits;
          if (written.truncated > 0)
            deps.logger.warn(
              { ...targetFields(target), ...windowFields(w) },
              `${label}: window ${iso(w.start)}..${iso(w.end)} still truncated at 5 minutes; stored what came`,
            );
          deps.metrics?.window(target, "done", written);
          if (fetched.short) deferShort(w, fetched, written.rows);
          else deps.progress?.windowDone(target.op.id, written.rows);
        } catch (e) {
          countRequests();
          // Stopped (a signal, the target's abort): abandoned, not failed; the next run fetches it.
          const stopped = abort.signal.aborted || deps.hardStop?.aborted || (deps.stopping?.aborted && e === deps.stopping.reason);
          if (stopped && !(e instanceof AuthError)) return;
          if (e instanceof LockLostError) {
            deps.logger.warn(targetFields(target), e.message);
            abort.abort(e);
            return;
          }
          const { requests, retries } = fetched;
          counts.failed += 1;
          counts.windows += 1;
          const message = describeError(e);
          deps.logger.error(
            { ...targetFields(target), ...windowFields(w) },
            `${label}: window ${iso(w.start)}..${iso(w.end)} failed: ${message}`,
          );
          await lockedWrite(deps, lock, label, (tx) => recordFailedWindow(tx, target, w, message, { requests, retries }, runId)).catch(
            (err) => {
              deps.logger.error(
                { ...targetFields(target), ...windowFields(w) },
                `${label}: could not record the failed window: ${describeError(err)}`,
              );
            },
          );
          deps.progress?.windowDone(target.op.id, 0);
          deps.metrics?.window(target, "failed");
          // A token problem will not heal by retrying the next window: stop this target.
          if (e instanceof AuthError) abort.abort(e);
        }
      }),
    ),
  );
  // Windows finish out of order: a window that committed while an earlier one was still in
  // flight could not move the watermark past it. Now that all are committed, catch up.
  const final = advanceWatermark(current, startMs, ledger);
  if (final !== null && (current === null || final > current)) {
    await lockedWrite(deps, lock, label, (tx) => writeWatermark(tx, target.op.id, target.pcode, target.partition, final));
  }
  return counts;
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}
