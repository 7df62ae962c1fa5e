// The plan of one windowed target: its ledger, its watermark and the planner's now go into the
// pure planner (src/windows/plan.ts), which says what to fetch. Also used by `backfill --dry-run`
// and `enqueue backfill`.
import { readLedger } from "../db/readLedger.ts";
import { readOpenTimes } from "../db/readOpenTimes.ts";
import { readWatermark } from "../db/readWatermark.ts";
import { retainedStart } from "../warehouse/retention.ts";
import { alignDown } from "../windows/grid.ts";
import type { Span } from "../windows/intervals.ts";
import { effectiveGrain, type LedgerWindow, planBackfill, planIncremental, type StreamPlanSpec, type Window } from "../windows/plan.ts";
import { plannerNow } from "./server-clock.ts";
import { configuredGrain } from "./targets.ts";
import type { EngineDeps, RunMode, Target } from "./types.ts";

/** What a target fetches, and the ledger and watermark it was planned from. */
export interface TargetPlan {
  readonly windows: Window[];
  readonly ledger: LedgerWindow[];
  readonly watermark: number | null;
  readonly startMs: number;
}

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
    // Never before the retention's start: what prune drops is not fetched again.
    startMs: retainedStart(deps.config.retention, op.id, sync.startMs, deps.now()),
  };
}

/** Plans the windows of a target without fetching anything, up to the planner's `now`. */
export async function planTarget(deps: EngineDeps, target: Target, mode: RunMode, now = plannerNow(deps)): Promise<TargetPlan> {
  const { sql } = deps.database;
  const spec = planSpec(deps, target);
  const entries = await readLedger(sql, { stream: target.op.id, pcode: target.pcode, partition: target.partition });
  const ledger = entries.map((e) => ({ start: e.windowStart, end: e.windowEnd, status: e.status }));
  const watermark = await readWatermark(sql, target.op.id, target.pcode, target.partition);
  const windows =
    mode.kind === "backfill"
      ? planBackfill(spec, mode.from, mode.to, ledger, { now })
      : planIncremental(spec, ledger, watermark, now, await openRanges(deps, target, spec, now));
  return { windows, ledger, watermark, startMs: spec.startMs };
}

/** The grain windows of rows still open (events), re-read until they resolve. */
async function openRanges(deps: EngineDeps, target: Target, spec: StreamPlanSpec, now: number): Promise<Span[]> {
  const rule = target.stream.reReadOpen;
  if (!rule) return [];
  const grain = effectiveGrain(spec);
  const since = now - deps.config.sync.openEventLookbackMs;
  const times = await readOpenTimes(deps.database.sql, target.stream.table, rule, target.pcode, since);
  const starts = [...new Set(times.map((t) => alignDown(t, grain)))];
  return starts.map((start) => ({ start, end: start + grain }));
}
