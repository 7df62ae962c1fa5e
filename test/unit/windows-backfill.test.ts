import { describe, expect, it } from "vitest";
import { DAY_MS, GRID_MS, HOUR_MS, MINUTE_MS, splitWindow } from "../../src/windows/grid.ts";
import { planBackfill as lazyPlanBackfill, type StreamPlanSpec } from "../../src/windows/plan.ts";
import type { LedgerWindow, Window } from "../../src/windows/types.ts";

// The planner yields lazily; these tests read its whole plan.
const planBackfill = (...args: Parameters<typeof lazyPlanBackfill>) => [...lazyPlanBackfill(...args)];

const t = (h: number, m = 0) => Date.UTC(2024, 0, 15) + h * HOUR_MS + m * MINUTE_MS;
const hhmm = (ms: number) => new Date(ms).toISOString().slice(8, 16);
const show = (ws: readonly Window[]) => ws.map((w) => `${hhmm(w.start)}-${hhmm(w.end)} ${w.reason}`);
const done = (start: number, end: number): LedgerWindow => ({ start, end, status: "done" });

const hourly: StreamPlanSpec = { grainMs: HOUR_MS, limitMs: DAY_MS, lookbackMs: HOUR_MS, settleMs: 10 * MINUTE_MS, startMs: t(0) };

describe("planBackfill", () => {
  it("widens both boundaries to whole grain windows", () => {
    expect(show(planBackfill(hourly, t(0, 20), t(2, 40)))).toEqual([
      "15T00:00-15T01:00 backfill",
      "15T01:00-15T02:00 backfill",
      "15T02:00-15T03:00 backfill",
    ]);
    expect(show(planBackfill(hourly, t(1), t(2)))).toEqual(["15T01:00-15T02:00 backfill"]);
  });

  it("may reach before the stream's startMs", () => {
    expect(show(planBackfill(hourly, t(-1, 30), t(0, 30)))).toEqual(["14T23:00-15T00:00 backfill", "15T00:00-15T01:00 backfill"]);
  });

  it("is capped at the incremental horizon when now is given (last window partial)", () => {
    expect(show(planBackfill(hourly, t(0, 20), t(5), [], { now: t(2, 45) }))).toEqual([
      "15T00:00-15T01:00 backfill",
      "15T01:00-15T02:00 backfill",
      "15T02:00-15T02:35 backfill",
    ]);
    expect(planBackfill(hourly, t(3), t(5), [], { now: t(2, 45) })).toEqual([]);
  });

  it("re-fetches everything by default; onlyMissing skips grain windows covered by done pieces", () => {
    const ledger = [done(t(0), t(0, 30)), { start: t(0, 30), end: t(1), status: "truncated" as const }, done(t(1), t(1, 30))];
    expect(planBackfill(hourly, t(0), t(3), ledger)).toHaveLength(3);
    expect(show(planBackfill(hourly, t(0), t(3), ledger, { onlyMissing: true }))).toEqual([
      "15T01:00-15T02:00 backfill",
      "15T02:00-15T03:00 backfill",
    ]);
    // A failed window of another grain (3 h) is fetched again whole, as its hourly parts.
    const failedOnly = [{ start: t(0), end: t(3), status: "failed" as const }];
    const [again, ...rest] = planBackfill(hourly, t(0), t(3), failedOnly, { onlyMissing: true });
    expect(rest).toEqual([]);
    expect(again?.parts?.map((p) => `${hhmm(p.start)}-${hhmm(p.end)}`)).toEqual([
      "15T00:00-15T01:00",
      "15T01:00-15T02:00",
      "15T02:00-15T03:00",
    ]);
  });

  it("uses the clamped grain: 2 d configured, 24 h limit -> UTC days", () => {
    const stat = { ...hourly, grainMs: 2 * DAY_MS, limitMs: DAY_MS };
    expect(show(planBackfill(stat, t(-30), t(20)))).toEqual([
      "13T00:00-14T00:00 backfill",
      "14T00:00-15T00:00 backfill",
      "15T00:00-16T00:00 backfill",
    ]);
  });

  it("plans nothing for an empty or reversed range", () => {
    expect(planBackfill(hourly, t(2), t(2))).toEqual([]);
    expect(planBackfill(hourly, t(3), t(2))).toEqual([]);
  });
});

describe("splitWindow", () => {
  it.each([
    ["1 h -> 30 + 30", t(0), t(1), t(0, 30)],
    ["24 h -> 12 + 12", t(0), t(24), t(12)],
    ["15 min -> 5 + 10", t(0), t(0, 15), t(0, 5)],
    ["10 min -> 5 + 5", t(0), t(0, 10), t(0, 5)],
  ])("%s", (_name, start, end, mid) => {
    expect(splitWindow({ start, end })).toEqual([
      { start, end: mid },
      { start: mid, end },
    ]);
  });

  it("recurses down to 5-minute cubes and then returns null", () => {
    let leaves: { start: number; end: number }[] = [];
    const stack = [{ start: t(0), end: t(1) }];
    let splits = 0;
    while (stack.length > 0) {
      const w = stack.pop()!;
      const parts = splitWindow(w);
      if (parts === null) leaves.push(w);
      else {
        splits++;
        stack.push(...parts);
      }
    }
    leaves = leaves.sort((a, b) => a.start - b.start);
    expect(leaves).toHaveLength(12);
    expect(splits).toBe(11);
    leaves.forEach((w, i) => {
      expect(w).toEqual({ start: t(0, 5 * i), end: t(0, 5 * i + 5) });
    });
    expect(splitWindow({ start: t(0), end: t(0) + GRID_MS })).toBeNull();
  });

  it("refuses off-grid or empty windows", () => {
    expect(() => splitWindow({ start: t(0, 1), end: t(1) })).toThrow(RangeError);
    expect(() => splitWindow({ start: t(1), end: t(1) })).toThrow(RangeError);
  });
});
