// Property-style checks: many random specs, ledgers and clocks from a seeded PRNG (reproducible),
// asserting the planner's invariants rather than particular outputs.
import { describe, expect, it } from "vitest";
import { mulberry32 } from "../../src/sandbox/rng.ts";
import { alignDown, alignUp, DAY_MS, floorToGrid, GRID_MS, HOUR_MS, isOnGrid, MINUTE_MS } from "../../src/windows/grid.ts";
import { mergeSpans, type Span, uncovered } from "../../src/windows/intervals.ts";
import {
  advanceWatermark,
  effectiveGrain,
  planBackfill as lazyPlanBackfill,
  planIncremental as lazyPlanIncremental,
  type StreamPlanSpec,
  syncStart,
} from "../../src/windows/plan.ts";
import type { LedgerWindow, Window } from "../../src/windows/types.ts";

// The planner yields lazily; these tests read its whole plan.
const planBackfill = (...args: Parameters<typeof lazyPlanBackfill>) => [...lazyPlanBackfill(...args)];
// The planner yields lazily; these tests read its whole plan.
const planIncremental = (...args: Parameters<typeof lazyPlanIncremental>) => [...lazyPlanIncremental(...args)];

const BASE = Date.UTC(2024, 2, 30, 17, 3, 12, 345); // deliberately off every grid
const CASES = 400;

function randomCase(rand: () => number) {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
  const int = (n: number) => Math.floor(rand() * n);
  const startMs = BASE - int(4 * DAY_MS);
  const spec: StreamPlanSpec = {
    grainMs: pick([5, 10, 15, 30, 60, 120, 24 * 60, 48 * 60, 31 * 24 * 60].map((m) => m * MINUTE_MS)),
    limitMs: pick([null, HOUR_MS, DAY_MS, 31 * DAY_MS, 365 * DAY_MS]),
    lookbackMs: pick([0, 30 * MINUTE_MS, HOUR_MS, DAY_MS]),
    settleMs: pick([0, 10 * MINUTE_MS, 17 * MINUTE_MS]),
    startMs,
    // Sometimes a retention's start: no hole before it is planned.
    ...(rand() < 0.3 ? { floorMs: startMs - int(2 * DAY_MS) } : {}),
  };
  const now = BASE + int(2 * DAY_MS);
  // Random on-grid pieces around [startMs, now), some overlapping, some beyond the horizon.
  const ledger: LedgerWindow[] = Array.from({ length: int(25) }, () => {
    const start = floorToGrid(spec.startMs - DAY_MS + int(7 * DAY_MS));
    return { start, end: start + GRID_MS * (1 + int(40)), status: pick(["done", "done", "truncated", "failed"] as const) };
  });
  const watermark = rand() < 0.3 ? null : rand() < 0.5 ? advanceWatermark(null, spec.startMs, ledger) : floorToGrid(BASE - int(5 * DAY_MS));
  const extras: Span[] = rand() < 0.5 ? [] : [{ start: BASE - int(6 * DAY_MS), end: BASE - int(DAY_MS) }];
  return { spec, now, ledger, watermark, extras };
}

// Sorted, non-overlapping, on the grid, aligned to the grain, within grain and limit, inside [lo, hi);
// a window widened over stored windows of another grain (`parts`) instead cuts through none of them,
// reaches outside [lo, hi) only over them, and is fetched as parts that tile it, each within grain
// and limit. Returns the violations (one expect per plan keeps thousands of windows per case fast).
function shapeProblems(ws: readonly Window[], spec: StreamPlanSpec, lo: number, hi: number, ledger: readonly LedgerWindow[]): string[] {
  const grain = effectiveGrain(spec);
  const stored = mergeSpans(ledger);
  const problems: string[] = [];
  for (const [i, w] of ws.entries()) {
    const at = `#${i} [${w.start}, ${w.end})`;
    if (!isOnGrid(w.start) || !isOnGrid(w.end)) problems.push(`${at} off the 5-minute grid`);
    for (const e of ledger)
      if (e.start < w.end && e.end > w.start && (e.start < w.start || e.end > w.end))
        problems.push(`${at} cuts through stored [${e.start}, ${e.end})`);
    if (w.parts) problems.push(...widenedProblems(w, at, grain, spec, lo, hi, stored));
    else {
      const len = w.end - w.start;
      if (len <= 0 || len > grain) problems.push(`${at} length ${len} outside (0, grain ${grain}]`);
      if (spec.limitMs !== null && len > spec.limitMs) problems.push(`${at} exceeds limit ${spec.limitMs}`);
      if (alignDown(w.start, grain) !== w.start && !ws.slice(0, i).some((v) => v.parts && v.end === w.start))
        problems.push(`${at} not aligned to grain ${grain}`);
      // Only a window cut by the cap (or after a widened one) may be shorter than the grain.
      if (w.end !== hi && len !== grain && alignDown(w.start, grain) === w.start) problems.push(`${at} partial but not at the cap ${hi}`);
      if (w.start < lo || w.end > hi) problems.push(`${at} outside [${lo}, ${hi})`);
    }
    const next = ws[i + 1];
    if (next && next.start < w.end) problems.push(`${at} overlaps or precedes the next window`);
  }
  return problems;
}

function widenedProblems(
  w: Window,
  at: string,
  grain: number,
  spec: StreamPlanSpec,
  lo: number,
  hi: number,
  stored: readonly Span[],
): string[] {
  const problems: string[] = [];
  let cursor = w.start;
  for (const p of w.parts!) {
    if (p.start !== cursor) problems.push(`${at} parts do not tile it at ${p.start}`);
    if (p.end - p.start > grain || (spec.limitMs !== null && p.end - p.start > spec.limitMs))
      problems.push(`${at} part over grain or limit`);
    cursor = p.end;
  }
  if (cursor !== w.end) problems.push(`${at} parts end at ${cursor}`);
  if (w.start < lo && uncovered(stored, w.start, lo).length > 0) problems.push(`${at} reaches below ${lo} beyond stored windows`);
  if (w.end > hi && uncovered(stored, hi, w.end).length > 0) problems.push(`${at} reaches past ${hi} beyond stored windows`);
  return problems;
}

const coverageOf = (ledger: readonly LedgerWindow[]) => mergeSpans(ledger.filter((w) => w.status !== "failed"));

describe("planner invariants over random inputs", () => {
  it("incremental plans are well formed and complete, and executing them brings the watermark to the horizon", () => {
    const rand = mulberry32(20240330);
    for (let i = 0; i < CASES; i++) {
      const { spec, now, ledger, watermark, extras } = randomCase(rand);
      const grain = effectiveGrain(spec);
      const origin = alignDown(spec.startMs, grain);
      const horizon = floorToGrid(now - spec.settleMs);
      // The span starts at the first ledger window or the watermark when they are earlier than
      // startMs (their holes are work), never before the floor.
      const lo = syncStart(spec, ledger, watermark);
      const earliest = Math.min(spec.startMs, watermark ?? Number.POSITIVE_INFINITY, ...ledger.map((w) => w.start));
      expect(lo).toBe(alignDown(Math.max(spec.floorMs ?? earliest, earliest), grain));
      const plan = planIncremental(spec, ledger, watermark, now, extras);
      expect(shapeProblems(plan, spec, lo, horizon, ledger)).toEqual([]);

      // Everything in [lo, horizon) is either planned or already covered by done pieces.
      const afterRun = coverageOf([...ledger, ...plan.map((w) => ({ ...w, status: "done" as const }))]);
      expect(uncovered(afterRun, lo, horizon)).toEqual([]);
      // Windows already covered are planned only for the lookback or open events.
      const before = coverageOf(ledger);
      const needless = plan.filter(
        (w) => uncovered(before, w.start, w.end).length === 0 && w.reason !== "lookback" && w.reason !== "open-event",
      );
      expect(needless).toEqual([]);
      // The lookback span before the watermark is always re-read.
      if (watermark !== null && spec.lookbackMs > 0) {
        const lb = { start: Math.max(origin, watermark - spec.lookbackMs), end: Math.min(watermark, horizon) };
        expect(uncovered(mergeSpans(plan), lb.start, lb.end)).toEqual([]);
      }
      if (horizon > origin) {
        // The engine's watermark runs from the span's start (TargetPlan.startMs).
        const wm = advanceWatermark(watermark, lo, [...ledger, ...plan.map((w) => ({ ...w, status: "done" as const }))]);
        expect(wm).toBeGreaterThanOrEqual(horizon);
        // A second run at the same instant has nothing new, missing or failed left.
        const again = planIncremental(spec, [...ledger, ...plan.map((w) => ({ ...w, status: "done" as const }))], wm, now, extras);
        expect(again.filter((w) => w.reason === "new" || w.reason === "gap" || w.reason === "retry")).toEqual([]);
      }
    }
  }, 30_000); // 400 plans of up to thousands of 5-minute windows: seconds on a loaded machine, above vitest's default 5 s

  it("the watermark never moves backwards and never passes an uncovered instant", () => {
    const rand = mulberry32(7);
    for (let i = 0; i < CASES; i++) {
      const { spec, ledger, watermark } = randomCase(rand);
      const next = advanceWatermark(watermark, spec.startMs, ledger);
      if (watermark !== null) expect(next).toBeGreaterThanOrEqual(watermark);
      if (next !== null && next !== watermark) {
        const from = watermark === null ? spec.startMs : Math.max(watermark, spec.startMs);
        expect(uncovered(coverageOf(ledger), from, next)).toEqual([]);
      }
    }
  });

  it("backfill plans are well formed and cover the requested range", () => {
    const rand = mulberry32(99);
    for (let i = 0; i < CASES; i++) {
      const { spec, now, ledger } = randomCase(rand);
      const from = BASE - Math.floor(rand() * 10 * DAY_MS);
      const to = from + Math.floor(rand() * 3 * DAY_MS);
      const grain = effectiveGrain(spec);
      const capped = rand() < 0.5;
      const onlyMissing = rand() < 0.5;
      const hi = Math.min(alignUp(to, grain), capped ? floorToGrid(now - spec.settleMs) : Number.POSITIVE_INFINITY);
      const plan = planBackfill(spec, from, to, ledger, capped ? { now, onlyMissing } : { onlyMissing });
      expect(shapeProblems(plan, spec, alignDown(from, grain), hi, ledger)).toEqual([]);
      expect(plan.every((w) => w.reason === "backfill")).toBe(true);
      const reach = Math.min(to, hi);
      const have = onlyMissing ? [...plan, ...coverageOf(ledger)] : plan;
      if (reach > from) expect(uncovered(mergeSpans(have), from, reach)).toEqual([]);
    }
  });
});
