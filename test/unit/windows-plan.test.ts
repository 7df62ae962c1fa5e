import { describe, expect, it } from "vitest";
import { DAY_MS, HOUR_MS, MINUTE_MS } from "../../src/windows/grid.ts";
import {
  advanceWatermark,
  effectiveGrain,
  planIncremental as lazyPlanIncremental,
  type StreamPlanSpec,
  syncStart,
} from "../../src/windows/plan.ts";
import type { LedgerWindow, Window } from "../../src/windows/types.ts";

// The planner yields lazily; these tests read its whole plan.
const planIncremental = (...args: Parameters<typeof lazyPlanIncremental>) => [...lazyPlanIncremental(...args)];

// Fake clock: plain numbers. Day 15 of January 2024, UTC; `t(-2)` is 22:00 on the 14th.
const t = (h: number, m = 0) => Date.UTC(2024, 0, 15) + h * HOUR_MS + m * MINUTE_MS;
// "15T10:00" style labels keep expectations readable.
const hhmm = (ms: number) => new Date(ms).toISOString().slice(8, 16);
const show = (ws: readonly Window[]) => ws.map((w) => `${hhmm(w.start)}-${hhmm(w.end)} ${w.reason}`);
const done = (start: number, end: number): LedgerWindow => ({ start, end, status: "done" });
const failed = (start: number, end: number): LedgerWindow => ({ start, end, status: "failed" });
const truncated = (start: number, end: number): LedgerWindow => ({ start, end, status: "truncated" });
// What the engine writes after fetching a plan successfully.
const record = (ws: readonly Window[]) => ws.map((w) => done(w.start, w.end));
// The hourly windows of [from, to) done, as a sync at the hourly grain records them.
const hoursDone = (from: number, to: number) =>
  Array.from({ length: (to - from) / HOUR_MS }, (_, i) => done(from + i * HOUR_MS, from + (i + 1) * HOUR_MS));

const hourly: StreamPlanSpec = { grainMs: HOUR_MS, limitMs: DAY_MS, lookbackMs: HOUR_MS, settleMs: 10 * MINUTE_MS, startMs: t(0) };

describe("planIncremental", () => {
  it("first run: from alignDown(startMs) to floorToGrid(now - settle), last window partial", () => {
    const plan = planIncremental({ ...hourly, startMs: t(0, 20) }, [], null, t(3, 7));
    expect(show(plan)).toEqual(["15T00:00-15T01:00 new", "15T01:00-15T02:00 new", "15T02:00-15T02:55 new"]);
  });

  it("second run 30 minutes later: the partial window again as a whole, the new part, the lookback", () => {
    const first = planIncremental(hourly, [], null, t(3, 7));
    const ledger = record(first);
    const wm = advanceWatermark(null, hourly.startMs, ledger);
    expect(wm).toBe(t(2, 55));
    const second = planIncremental(hourly, ledger, wm, t(3, 37));
    // horizon 03:25; lookback [01:55, 02:55) widens to the 01:00 and 02:00 hours.
    expect(show(second)).toEqual(["15T01:00-15T02:00 lookback", "15T02:00-15T03:00 new", "15T03:00-15T03:25 new"]);
    const ledger2 = [...ledger, ...record(second)];
    expect(advanceWatermark(wm, hourly.startMs, ledger2)).toBe(t(3, 25));
  });

  it("the lookback never re-reads pruned or archived time (its rows were dropped with their month)", () => {
    for (const status of ["pruned", "archived"] as const) {
      // Hours 00-03 dropped by prune, nothing after them yet: the watermark is their end.
      const gone = hoursDone(t(0), t(3)).map((w) => ({ ...w, status }));
      expect(show(planIncremental(hourly, gone, t(3), t(3, 7))), status).toEqual([]);
      expect(show(planIncremental(hourly, gone, t(3), t(4, 30))), status).toEqual(["15T03:00-15T04:00 new", "15T04:00-15T04:20 new"]);
      // A day's grain: the day window holding them is not fetched for the lookback either.
      expect(planIncremental({ ...hourly, grainMs: DAY_MS }, gone, t(3), t(3, 7)), status).toEqual([]);
    }
  });

  it("a second run at the same instant only re-reads the lookback", () => {
    const ledger = record(planIncremental(hourly, [], null, t(3, 7)));
    const again = planIncremental(hourly, ledger, t(2, 55), t(3, 7));
    expect(show(again)).toEqual(["15T01:00-15T02:00 lookback", "15T02:00-15T02:55 lookback"]);
    expect(planIncremental({ ...hourly, lookbackMs: 0 }, ledger, t(2, 55), t(3, 7))).toEqual([]);
  });

  it.each([
    ["settle pushes the horizon back to the grid", 10 * MINUTE_MS, t(3, 9), t(2, 55)],
    ["exactly on a boundary after settle", 10 * MINUTE_MS, t(3, 10), t(3)],
    ["no settle", 0, t(3), t(3)],
    ["long settle", 2 * HOUR_MS, t(3, 4), t(1)],
  ])("settle: %s", (_name, settleMs, now, horizon) => {
    const plan = planIncremental({ ...hourly, settleMs }, [], null, now);
    expect(plan.at(-1)?.end).toBe(horizon);
    expect(plan.every((w) => w.end <= horizon)).toBe(true);
  });

  it("plans nothing before the first window has started to settle", () => {
    expect(planIncremental(hourly, [], null, t(0, 14))).toEqual([]);
    expect(show(planIncremental(hourly, [], null, t(0, 15)))).toEqual(["15T00:00-15T00:05 new"]);
  });

  it("a failed window in the middle is retried and holds the watermark back", () => {
    const ledger = [done(t(0), t(1)), failed(t(1), t(2)), done(t(2), t(3)), done(t(3), t(4))];
    const wm = advanceWatermark(null, hourly.startMs, ledger);
    expect(wm).toBe(t(1));
    const plan = planIncremental(hourly, ledger, wm, t(5));
    // Lookback before the watermark and before the end of the latest done coverage (04:00).
    expect(show(plan)).toEqual([
      "15T00:00-15T01:00 lookback",
      "15T01:00-15T02:00 retry",
      "15T03:00-15T04:00 lookback",
      "15T04:00-15T04:50 new",
    ]);
    // Once the retry succeeds the watermark jumps over the already done windows.
    expect(advanceWatermark(wm, hourly.startMs, [...ledger, ...record(plan)])).toBe(t(4, 50));
  });

  it("a window that fails on re-read below the watermark is retried; the watermark never goes back", () => {
    const ledger = [done(t(0), t(1)), failed(t(1), t(2)), done(t(2), t(3))];
    expect(advanceWatermark(t(3), hourly.startMs, ledger)).toBe(t(3));
    const plan = planIncremental({ ...hourly, lookbackMs: 0 }, ledger, t(3), t(3, 10));
    expect(show(plan)).toEqual(["15T01:00-15T02:00 retry"]);
  });

  it("a hole in the ledger is planned as a gap, and the watermark stops before it", () => {
    const ledger = [done(t(0), t(1)), done(t(2), t(3))];
    const wm = advanceWatermark(null, hourly.startMs, ledger);
    expect(wm).toBe(t(1));
    const plan = planIncremental(hourly, ledger, wm, t(3, 20));
    expect(show(plan)).toEqual([
      "15T00:00-15T01:00 lookback",
      "15T01:00-15T02:00 gap",
      "15T02:00-15T03:00 lookback",
      "15T03:00-15T03:10 new",
    ]);
  });

  it("an earlier startMs opens a gap below the watermark", () => {
    const ledger = hoursDone(t(0), t(3));
    const plan = planIncremental({ ...hourly, startMs: t(-1, -30) }, ledger, t(3), t(3, 10));
    expect(show(plan)).toEqual(["14T22:00-14T23:00 gap", "14T23:00-15T00:00 gap", "15T02:00-15T03:00 lookback"]);
  });

  describe("holes before startMs (a reset range, an outage longer than APM_START) are work, not history", () => {
    // A day of history before startMs (t(0)) and the hours since, with 14T02..04 forgotten by reset.
    const history = [done(t(-24), t(-22)), done(t(-20), t(3))];
    const spec = { ...hourly, lookbackMs: 0 };

    it("a reset range before startMs is planned as a gap, and the watermark waits at it", () => {
      // reset moved the watermark back to the first forgotten window.
      const plan = planIncremental(spec, history, t(-22), t(3, 10));
      expect(show(plan)).toEqual(["14T02:00-14T03:00 gap", "14T03:00-14T04:00 gap"]);
      const start = syncStart(spec, history, t(-22));
      expect(start).toBe(t(-24));
      // The watermark stays at the hole until it is filled, then reaches the end of the ledger.
      expect(advanceWatermark(t(-22), start, history)).toBe(t(-22));
      expect(advanceWatermark(t(-22), start, [...history, ...record(plan)])).toBe(t(3));
    });

    it("a hole between the ledger's first window and startMs is filled even with the watermark past it", () => {
      expect(show(planIncremental(spec, history, t(3), t(3, 10)))).toEqual(["14T02:00-14T03:00 gap", "14T03:00-14T04:00 gap"]);
    });

    it("a watermark before the ledger (every window forgotten, or an outage) starts the span", () => {
      const plan = planIncremental(spec, [done(t(1), t(3))], t(-2), t(3, 10));
      expect(show(plan)).toEqual(["14T22:00-14T23:00 gap", "14T23:00-15T00:00 gap", "15T00:00-15T01:00 gap"]);
    });

    it("nothing before the floor (the retention's start) is planned, and the watermark does not wait there", () => {
      const floored = { ...spec, floorMs: t(-21) };
      expect(show(planIncremental(floored, history, t(-22), t(3, 10)))).toEqual(["14T03:00-14T04:00 gap"]);
      const start = syncStart(floored, history, t(-22));
      expect(start).toBe(t(-21));
      expect(advanceWatermark(t(-22), start, [...history, done(t(-21), t(-20))])).toBe(t(3));
    });

    it("a failed window before startMs is retried", () => {
      const ledger = [done(t(-24), t(-23)), failed(t(-23), t(-22)), done(t(-22), t(3))];
      expect(show(planIncremental(spec, ledger, t(-23), t(3, 10)))).toEqual(["14T01:00-14T02:00 retry"]);
    });
  });

  it("split pieces (12 x 5 min, 30 + 30 min, truncated) cover their grain window", () => {
    const fiveMinutePieces = Array.from({ length: 12 }, (_, i) => done(t(0, i * 5), t(0, i * 5 + 5)));
    const ledger = [
      failed(t(0), t(1)), // the whole hour failed first, then its 5-minute pieces succeeded
      ...fiveMinutePieces,
      done(t(1), t(1, 30)),
      truncated(t(1, 30), t(2)),
      done(t(2), t(2, 30)),
      failed(t(2, 30), t(3)),
    ];
    const wm = advanceWatermark(null, hourly.startMs, ledger);
    expect(wm).toBe(t(2, 30));
    const plan = planIncremental({ ...hourly, lookbackMs: 0 }, ledger, wm, t(3, 10));
    expect(show(plan)).toEqual(["15T02:00-15T03:00 retry"]);
    // Eleven of twelve pieces are not enough: the whole hour is planned again (the first 5 minutes are a hole).
    const partial = planIncremental({ ...hourly, lookbackMs: 0 }, fiveMinutePieces.slice(1), null, t(1, 10));
    expect(show(partial)).toEqual(["15T00:00-15T01:00 gap"]);
    expect(advanceWatermark(null, hourly.startMs, fiveMinutePieces.slice(1))).toBeNull();
  });

  it("re-reads the windows of open events, clipped to [start, horizon)", () => {
    const ledger = hoursDone(t(0), t(5));
    const extra = [
      { start: t(1, 30), end: t(2, 10) },
      { start: t(-5), end: t(-4) },
      { start: t(4, 59), end: t(9) },
    ];
    const plan = planIncremental(hourly, ledger, t(5), t(5, 10), extra);
    expect(show(plan)).toEqual(["15T01:00-15T02:00 open-event", "15T02:00-15T03:00 open-event", "15T04:00-15T05:00 lookback"]);
  });

  it("clamps the grain to the API limit: heap use (1 h limit, 1 d grain)", () => {
    const heap = { ...hourly, grainMs: DAY_MS, limitMs: HOUR_MS, settleMs: 0 };
    expect(effectiveGrain(heap)).toBe(HOUR_MS);
    expect(show(planIncremental(heap, [], null, t(3)))).toEqual([
      "15T00:00-15T01:00 new",
      "15T01:00-15T02:00 new",
      "15T02:00-15T03:00 new",
    ]);
  });

  it("clamps the grain to the API limit: statistics (24 h limit, 2 d grain) give UTC days", () => {
    const stat = { ...hourly, grainMs: 2 * DAY_MS, limitMs: DAY_MS, startMs: t(-5 * 24 + 13) };
    expect(effectiveGrain(stat)).toBe(DAY_MS);
    expect(show(planIncremental(stat, [], null, t(6)))).toEqual([
      "10T00:00-11T00:00 new",
      "11T00:00-12T00:00 new",
      "12T00:00-13T00:00 new",
      "13T00:00-14T00:00 new",
      "14T00:00-15T00:00 new",
      "15T00:00-15T05:50 new",
    ]);
  });

  it("big grains (visitors) stay on the epoch grid of their grain and within the limit", () => {
    const monthly = { ...hourly, grainMs: 31 * DAY_MS, limitMs: 365 * DAY_MS, lookbackMs: 31 * DAY_MS, startMs: Date.UTC(2023, 0, 1) };
    const plan = planIncremental(monthly, [], null, t(0));
    expect(plan.length).toBeGreaterThan(10);
    for (const w of plan) expect(w.start % (31 * DAY_MS)).toBe(0);
    expect(plan[0]!.start).toBeLessThanOrEqual(Date.UTC(2023, 0, 1));
    expect(plan.at(-1)!.end).toBe(t(-1, 50));
  });

  it.each([
    ["grain not on the grid", { ...hourly, grainMs: 7 * MINUTE_MS }],
    ["zero grain", { ...hourly, grainMs: 0 }],
    ["limit below 5 minutes", { ...hourly, limitMs: MINUTE_MS }],
  ])("rejects %s", (_name, spec) => {
    expect(() => planIncremental(spec, [], null, t(3))).toThrow(RangeError);
  });
});

describe("advanceWatermark", () => {
  it.each<[string, number | null, readonly LedgerWindow[], number | null]>([
    ["nothing recorded", null, [], null],
    ["nothing recorded keeps the current value", t(2), [], t(2)],
    ["first unbroken run", null, [done(t(0), t(1)), done(t(1), t(2)), done(t(3), t(4))], t(2)],
    ["truncated counts as done", null, [done(t(0), t(1)), truncated(t(1), t(2))], t(2)],
    ["stops at a failed window", null, [done(t(0), t(1)), failed(t(1), t(2)), done(t(2), t(3))], t(1)],
    ["does not start after a hole at the beginning", null, [done(t(1), t(2))], null],
    ["continues from the current value", t(1), [done(t(1), t(2))], t(2)],
    ["never moves backwards", t(5), [done(t(0), t(1))], t(5)],
    ["unsorted input", null, [done(t(1), t(2)), done(t(0), t(1))], t(2)],
    ["start in the middle of the first window", null, [done(t(-1), t(1))], t(1)],
  ])("%s", (_name, current, ledger, expected) => {
    expect(advanceWatermark(current, t(0), ledger)).toBe(expected);
  });
});
