// The pure window planner (docs/design.md "Windows" and "Ledger and watermarks").
// No clock, no environment, no database: `now`, the stream's settings, the ledger and the
// watermark are passed in. All times are UTC epoch ms; all windows are half-open [start, end).
import { alignDown, alignUp, assertGrain, floorToGrid, GRID_MS, grainWindows } from "./grid.ts";
import { covers, mergeSpans, overlapsAny, type Span, spanContaining, uncovered } from "./intervals.ts";
import { isGone, type LedgerWindow, type Window, type WindowReason } from "./types.ts";
import { widenOverLedger } from "./widen.ts";

/** Per-stream planning settings (from the catalogue entry and config). */
export interface StreamPlanSpec {
  /** Configured window size; a positive multiple of 5 minutes. */
  grainMs: number;
  /** Hard API maximum per request (null: none); the grain is clamped to it. */
  limitMs: number | null;
  /** How far before the watermark every run re-reads (late data); 0 disables. */
  lookbackMs: number;
  /** Incremental runs stop at now - settle (the server clamps etime to its own clock). */
  settleMs: number;
  /** First-run start; widened down to the grain. */
  startMs: number;
  /**
   * Nothing before it is planned by a sync, not even a hole: the retention's start (prune drops
   * the time before it), at or before startMs. Absent: no such bound.
   */
  floorMs?: number;
}

/**
 * The grain actually used: `min(grainMs, limitMs)` (the limit rounded down to the 5-minute grid).
 * Throws RangeError if the grain is not a positive multiple of 5 minutes or the limit is below 5 minutes.
 */
export function effectiveGrain(spec: Pick<StreamPlanSpec, "grainMs" | "limitMs">): number {
  assertGrain(spec.grainMs);
  if (spec.limitMs === null) return spec.grainMs;
  const limit = Math.floor(spec.limitMs / GRID_MS) * GRID_MS;
  if (limit < GRID_MS) throw new RangeError(`limit must be at least 5 minutes, got ${spec.limitMs} ms`);
  return Math.min(spec.grainMs, limit);
}

/** The grain settings a stream's windows are cut by (config `grain` and `grains`). */
export interface GrainSettings {
  readonly grainMs: number;
  readonly grainOverridesMs: Readonly<Record<string, number>>;
}

/**
 * The one grain of a windowed stream: config `grains` for its id, else the catalogue's grain,
 * else the global grain; within its request limit (effectiveGrain).
 */
export function streamGrain(
  sync: GrainSettings,
  op: { readonly id: string; readonly windowLimitMs: number | null; readonly stream?: { readonly grainMs?: number } | null },
): number {
  const grainMs = sync.grainOverridesMs[op.id] ?? op.stream?.grainMs ?? sync.grainMs;
  return effectiveGrain({ grainMs, limitMs: op.windowLimitMs });
}

/** End of what an incremental run may fetch: floorToGrid(now - settle). */
export function horizonOf(spec: StreamPlanSpec, now: number): number {
  return floorToGrid(now - spec.settleMs);
}

/** The done coverage: truncated windows were stored and reported (re-fetching cannot get more), so they count as done. */
export function mergeCovered(ledger: readonly LedgerWindow[]): Span[] {
  return mergeSpans(ledger.filter((w) => w.status !== "failed"));
}

/**
 * Where a sync's span starts: alignDown(startMs, grain), or earlier where the ledger says history
 * there is incomplete: its first window (the holes between it and startMs, e.g. a range `reset`
 * forgot, are work, not history) or a watermark before it (reset moved it back there, or the
 * stream was not synced for longer than APM_START). Never before `floorMs`.
 */
export function syncStart(spec: StreamPlanSpec, ledger: readonly LedgerWindow[], watermark: number | null): number {
  const grain = effectiveGrain(spec);
  const first = ledger.reduce((min, w) => Math.min(min, w.start), watermark ?? Number.POSITIVE_INFINITY);
  const start = Math.max(spec.floorMs ?? Number.NEGATIVE_INFINITY, Math.min(spec.startMs, first));
  return alignDown(start, grain);
}

/**
 * Windows an incremental run should fetch, lazily and sorted by start, without duplicates or
 * overlaps: a plan of years is never held (only the ledger's holes are), so a first run from
 * years back starts at once and in bounded memory.
 *
 * - Span: from syncStart (alignDown(startMs, grain) on the first run, where grain = min(grainMs,
 *   limitMs); earlier when the ledger or the watermark reach before it) to the horizon
 *   floorToGrid(now - settle); nothing at or after the horizon is planned.
 * - Windows are grain windows aligned to UTC epoch multiples of the grain (1 h: whole hours, 1 d:
 *   UTC midnight), so a re-fetch always covers whole grain windows. Only the window containing the
 *   horizon is partial (it ends at the horizon); the next run re-fetches that whole grain window.
 * - Completeness comes from the ledger: a grain window (capped at the horizon) is complete when its
 *   done/truncated/pruned pieces cover it, whatever they are (one row, 12 x 5 min, 30 + 30 min).
 *   Every incomplete window of the span is planned: `retry` if a failed piece overlaps it, `gap` if
 *   it ends at or before the frontier (the watermark or the furthest ledger end, whichever is later:
 *   a hole, e.g. a range `reset` forgot, a missing row or an earlier startMs), else `new`.
 * - Lookback: the grain windows covering [watermark - lookback, watermark) are planned every run
 *   (`lookback`), not before alignDown(startMs), and none touching pruned or archived windows. When a failure holds the watermark back, the same
 *   span before the end of the latest done coverage is re-read too, so the recent past still gets
 *   its late data.
 * - `extraRanges` (e.g. windows of events still open) are widened to grain windows and planned as
 *   `open-event` within [alignDown(startMs), horizon).
 * - A window overlapping stored windows of another grain is widened over them (widenOverLedger).
 * A window gets the first reason that applies in the order retry/gap/new, lookback, open-event.
 */
export function* planIncremental(
  spec: StreamPlanSpec,
  ledger: readonly LedgerWindow[],
  watermark: number | null,
  now: number,
  extraRanges: readonly Span[] = [],
): Generator<Window> {
  const grain = effectiveGrain(spec);
  const horizon = horizonOf(spec, now);
  if (horizon <= alignDown(spec.startMs, grain)) return;
  const done = mergeCovered(ledger);
  const holes = holeWindows(spec, ledger, done, watermark, horizon);
  // Time whose rows prune dropped (archived first or not) is never read again, not even by the
  // lookback: the re-read would write rows back into a dropped month.
  const gone = mergeSpans(ledger.filter((w) => isGone(w.status)));
  const extra = extraWindows(spec, done, watermark, horizon, extraRanges).filter((w) => !overlapsAny(gone, w.start, w.end));
  const needed = (w: Window) => w.reason === "lookback" || w.reason === "open-event" || !covers(done, w.start, w.end);
  yield* widenOverLedger(mergeByStart(holes, extra), ledger, grain, needed);
}

/** The grain windows of the holes in the done coverage of a sync's span, by start: retry, gap or new. */
function* holeWindows(
  spec: StreamPlanSpec,
  ledger: readonly LedgerWindow[],
  done: readonly Span[],
  watermark: number | null,
  horizon: number,
): Generator<Window> {
  const grain = effectiveGrain(spec);
  const failed = mergeSpans(ledger.filter((w) => w.status === "failed"));
  const frontier = ledger.reduce((max, w) => Math.max(max, w.end), watermark ?? Number.NEGATIVE_INFINITY);
  for (const hole of uncovered(done, syncStart(spec, ledger, watermark), horizon)) {
    for (const w of grainWindows(hole.start, hole.end, grain, horizon)) {
      const reason = overlapsAny(failed, w.start, w.end) ? "retry" : w.end > frontier ? "new" : "gap";
      yield { start: w.start, end: w.end, reason };
    }
  }
}

/** The lookback's and the open events' windows (a few grain windows), sorted by start, each start once. */
function extraWindows(
  spec: StreamPlanSpec,
  done: readonly Span[],
  watermark: number | null,
  horizon: number,
  extraRanges: readonly Span[],
): Window[] {
  const grain = effectiveGrain(spec);
  const origin = alignDown(spec.startMs, grain);
  const planned = new Map<number, Window>();
  const add = (from: number, to: number, reason: WindowReason) => {
    for (const w of grainWindows(from, to, grain, horizon)) if (!planned.has(w.start)) planned.set(w.start, { ...w, reason });
  };
  if (spec.lookbackMs > 0 && watermark !== null) add(Math.max(origin, watermark - spec.lookbackMs), watermark, "lookback");
  const latestDone = done[done.length - 1];
  if (spec.lookbackMs > 0 && latestDone && latestDone.end > (watermark ?? Number.NEGATIVE_INFINITY)) {
    const anchor = Math.min(latestDone.end, horizon);
    add(Math.max(origin, anchor - spec.lookbackMs), anchor, "lookback");
  }
  for (const r of extraRanges) add(Math.max(origin, r.start), r.end, "open-event");
  return [...planned.values()].sort((a, b) => a.start - b.start);
}

/** Two plans sorted by start as one, each start once: the first plan's window wins. */
function* mergeByStart(first: Iterable<Window>, second: readonly Window[]): Generator<Window> {
  let i = 0;
  let last = Number.NEGATIVE_INFINITY;
  for (const w of first) {
    for (; i < second.length && second[i]!.start < w.start; i++) {
      if (second[i]!.start > last) yield second[i]!;
      last = Math.max(last, second[i]!.start);
    }
    if (w.start > last) yield w;
    last = Math.max(last, w.start);
  }
  for (; i < second.length; i++) if (second[i]!.start > last) yield second[i]!;
}

/**
 * Windows of a backfill of [from, to), lazily: the grain windows covering [alignDown(from),
 * alignUp(to)), sorted, reason `backfill`. With `now`, capped at the incremental horizon
 * floorToGrid(now - settle) (the last window may then be partial). By default every window is
 * re-fetched (windowed aggregates are replaced, so this is idempotent); with `onlyMissing`, grain
 * windows fully covered by done or truncated ledger pieces are skipped, which makes an interrupted
 * backfill resumable. `from` may lie before the stream's startMs: a backfill is an explicit request
 * for history. A window overlapping stored windows of another grain is widened over them.
 */
export function* planBackfill(
  spec: StreamPlanSpec,
  from: number,
  to: number,
  ledger: readonly LedgerWindow[] = [],
  opts: { onlyMissing?: boolean; now?: number } = {},
): Generator<Window> {
  const grain = effectiveGrain(spec);
  if (to <= from) return;
  const cap = opts.now === undefined ? Number.POSITIVE_INFINITY : horizonOf(spec, opts.now);
  const end = Math.min(alignUp(to, grain), cap);
  const done = opts.onlyMissing ? mergeCovered(ledger) : [];
  const windows = function* (): Generator<Window> {
    for (const w of grainWindows(from, end, grain, end)) {
      if (!opts.onlyMissing || !covers(done, w.start, w.end)) yield { start: w.start, end: w.end, reason: "backfill" };
    }
  };
  yield* widenOverLedger(windows(), ledger, grain, (w) => !opts.onlyMissing || !covers(done, w.start, w.end));
}

/** How many windows a plan has, its first start and its last end, read without holding it. */
export function planSummary(windows: Iterable<Window>): { count: number; from: number | null; to: number | null } {
  let count = 0;
  let from: number | null = null;
  let to: number | null = null;
  for (const w of windows) {
    count += 1;
    from ??= w.start;
    to = w.end;
  }
  return { count, from, to };
}

/**
 * The new watermark: the end of the unbroken run of done/truncated coverage that contains
 * max(current, startMs). Pieces of a split window join up, so a grain window recorded as
 * 30 + 30 min counts as covered (even if an earlier attempt at the whole window failed).
 * Never moves backwards, never passes an instant not covered by done/truncated pieces (a failed
 * or missing window); returns `current` unchanged when nothing new is covered.
 */
export function advanceWatermark(current: number | null, startMs: number, ledger: readonly LedgerWindow[]): number | null {
  const from = current === null ? startMs : Math.max(current, startMs);
  const run = spanContaining(mergeCovered(ledger), from);
  if (!run) return current;
  return current === null ? run.end : Math.max(current, run.end);
}
