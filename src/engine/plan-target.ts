// The plan of one windowed target: its ledger, its watermark and the planner's now go into the
// pure planner (src/windows/plan.ts), which says what to fetch. Also used by `backfill --dry-run`
// and `enqueue backfill`.
import { readLedger } from "../db/ledger/readLedger.ts";
import { readOpenTimes } from "../db/ledger/readOpenTimes.ts";
import { readWatermark } from "../db/ledger/readWatermark.ts";
import { readCrashed } from "../db/ledger/windowsInFlight.ts";
import { retainedStart } from "../warehouse/retention.ts";
import { alignDown } from "../windows/grid.ts";
import type { Span } from "../windows/intervals.ts";
import {
  effectiveGrain,
  planBackfill,
  planIncremental,
  planSummary,
  type StreamPlanSpec,
  streamGrain,
  syncStart,
} from "../windows/plan.ts";
import type { LedgerWindow, Window } from "../windows/types.ts";
import { plannerNow } from "./server-clock.ts";
import { type EngineDeps, type RunMode, type Target, targetFields, targetLabel } from "./types.ts";

/** What a target fetches, and the ledger and watermark it was planned from. */
export interface TargetPlan {
  /** The windows, read lazily (a plan of years is never held): each call reads the plan anew. */
  readonly windows: () => Iterable<Window>;
  /** How many windows `windows` yields, and the first start and last end (null: none). */
  readonly count: number;
  readonly from: number | null;
  readonly to: number | null;
  readonly ledger: LedgerWindow[];
  readonly watermark: number | null;
  /** Where the watermark's unbroken run starts: the sync's span (syncStart), so that it never passes a hole of it. */
  readonly startMs: number;
  /** Windows of a backfill left out because the ledger has them complete (`onlyMissing`); 0 for a sync. */
  readonly complete: number;
  /** A sync's windows before APM_START (holes of the ledger's history: a reset range, an outage), to say so; null: none. */
  readonly history: { readonly windows: number; readonly from: number; readonly to: number } | null;
  /**
   * Windows (by start) a sync does not fetch: in flight at each of their last crashes
   * (db/ledger/windowsInFlight.ts), with the count. A backfill fetches them: it is asked for by name.
   */
  readonly crashed: ReadonlyMap<number, number>;
}

/** Planner inputs of a target: catalogue defaults, overridden by config. */
export function planSpec(deps: EngineDeps, target: Target): StreamPlanSpec {
  const { sync } = deps.config;
  const { op, stream } = target;
  return {
    grainMs: streamGrain(sync, op),
    limitMs: op.windowLimitMs,
    // Streams whose rows stay open (events) use the configured event lookback (default 24 h).
    lookbackMs: stream.reReadOpen ? sync.eventLookbackMs : (stream.lookbackMs ?? sync.lookbackMs),
    settleMs: sync.settleMs,
    // Never before the retention's start: what prune drops is not fetched again.
    startMs: retainedStart(deps.config.retention, op.id, sync.startMs, deps.now()),
    ...retentionFloor(deps, op.id),
  };
}

/** `floorMs`: the retention's start, when the stream's table has a retention (a sync fills no hole before it). */
function retentionFloor(deps: EngineDeps, streamId: string): { floorMs?: number } {
  const floor = retainedStart(deps.config.retention, streamId, Number.NEGATIVE_INFINITY, deps.now());
  return Number.isFinite(floor) ? { floorMs: floor } : {};
}

/** Plans the windows of a target without fetching anything, up to the planner's `now`. */
export async function planTarget(deps: EngineDeps, target: Target, mode: RunMode, now = plannerNow(deps)): Promise<TargetPlan> {
  const { sql } = deps.database;
  const spec = planSpec(deps, target);
  const entries = await readLedger(sql, { stream: target.op.id, pcode: target.pcode, partition: target.partition });
  const ledger = entries.map((e) => ({ start: e.windowStart, end: e.windowEnd, status: e.status }));
  const watermark = await readWatermark(sql, target.op.id, target.pcode, target.partition);
  const startMs = syncStart(spec, ledger, watermark);
  if (mode.kind === "sync") {
    const open = await openRanges(deps, target, spec, now);
    const windows = () => planIncremental(spec, ledger, watermark, now, open);
    const origin = alignDown(spec.startMs, effectiveGrain(spec));
    const history = planSummary(takeWhile(windows(), (w) => w.start < origin));
    const crashed = await readCrashed(sql, { stream: target.op.id, pcode: target.pcode, partition: target.partition });
    const before = history.count > 0 ? { windows: history.count, from: history.from!, to: history.to! } : null;
    return { windows, ...planSummary(windows()), ledger, watermark, startMs, complete: 0, history: before, crashed };
  }
  const windows = () => planBackfill(spec, mode.from, mode.to, ledger, { now, onlyMissing: mode.onlyMissing });
  const summary = planSummary(windows());
  const complete = mode.onlyMissing ? planSummary(planBackfill(spec, mode.from, mode.to, ledger, { now })).count - summary.count : 0;
  return { windows, ...summary, ledger, watermark, startMs, complete: Math.max(0, complete), history: null, crashed: new Map() };
}

function* takeWhile<T>(items: Iterable<T>, keep: (item: T) => boolean): Generator<T> {
  for (const item of items) {
    if (!keep(item)) return;
    yield item;
  }
}

/** A sync fetching holes of the ledger before APM_START says so: work nobody asked for by name. */
export function noteHistory(deps: EngineDeps, target: Target, h: NonNullable<TargetPlan["history"]>): void {
  const span = `${new Date(h.from).toISOString()}..${new Date(h.to).toISOString()}`;
  deps.logger.info(
    { ...targetFields(target), windows: h.windows },
    `${targetLabel(target)}: ${h.windows} window(s) in ${span}, before APM_START, fill holes in the ledger (a range reset forgot, an interrupted backfill, an outage)`,
  );
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
