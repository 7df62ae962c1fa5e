// A grain change never cuts through a stored window (widenOverLedger), and a plan of years is read
// lazily: the first window comes at once, and the plan is counted without being held.
import { describe, expect, it } from "vitest";
import { DAY_MS, HOUR_MS, MINUTE_MS } from "../../src/windows/grid.ts";
import { mergeSpans } from "../../src/windows/intervals.ts";
import { planBackfill, planIncremental, planSummary, type StreamPlanSpec } from "../../src/windows/plan.ts";
import type { LedgerWindow, Window } from "../../src/windows/types.ts";

const t = (h: number, m = 0) => Date.UTC(2024, 0, 15) + h * HOUR_MS + m * MINUTE_MS;
const hhmm = (ms: number) => new Date(ms).toISOString().slice(8, 16);
const show = (ws: Iterable<Window>) =>
  [...ws].map((w) => `${hhmm(w.start)}-${hhmm(w.end)}${w.parts ? ` [${w.parts.map((p) => hhmm(p.start)).join(" ")}]` : ""}`);
const spec = (grainMs: number): StreamPlanSpec => ({ grainMs, limitMs: HOUR_MS, lookbackMs: 0, settleMs: 0, startMs: t(0) });
const stored = (grainMs: number, from: number, to: number): LedgerWindow[] =>
  Array.from({ length: (to - from) / grainMs }, (_, i) => ({ start: from + i * grainMs, end: from + (i + 1) * grainMs, status: "done" }));
// What the ledger holds once a plan is written: each window's pieces replace what lies inside it.
function written(ledger: readonly LedgerWindow[], plan: readonly Window[]): LedgerWindow[] {
  const kept = ledger.filter((e) => !plan.some((w) => e.start >= w.start && e.end <= w.end));
  return [...kept, ...plan.flatMap((w) => (w.parts ?? [w]).map((p) => ({ start: p.start, end: p.end, status: "done" as const })))];
}
const overlapping = (ledger: readonly LedgerWindow[]) =>
  ledger.filter((a, i) => ledger.some((b, j) => i !== j && a.start < b.end && b.start < a.end)).length;

describe("a refetch at another grain replaces what it overlaps", () => {
  it("30 minutes over hours: each hour fetched again whole, as its two halves", () => {
    const plan = [...planBackfill(spec(30 * MINUTE_MS), t(0), t(2), stored(HOUR_MS, t(0), t(2)))];
    expect(show(plan)).toEqual(["15T00:00-15T01:00 [15T00:00 15T00:30]", "15T01:00-15T02:00 [15T01:00 15T01:30]"]);
    const after = written(stored(HOUR_MS, t(0), t(2)), plan);
    expect(overlapping(after)).toBe(0);
    expect(mergeSpans(after)).toEqual([{ start: t(0), end: t(2) }]);
  });

  it("2 hours over half hours: the window holds them, nothing to widen", () => {
    const halves = stored(30 * MINUTE_MS, t(0), t(2));
    const plan = [...planBackfill({ ...spec(2 * HOUR_MS), limitMs: DAY_MS }, t(0), t(2), halves)];
    expect(show(plan)).toEqual(["15T00:00-15T02:00"]);
    expect(overlapping(written(halves, plan))).toBe(0);
  });

  it("a window reaching into a widened one starts where it ends; one inside it is dropped", () => {
    // 90-minute windows over 2-hour ones: [00:00, 01:30) widens to [00:00, 02:00); [01:30, 03:00)
    // starts at 02:00 and widens to 04:00; [03:00, 04:30) is what is left after it, one request.
    const plan = [...planBackfill({ ...spec(90 * MINUTE_MS), limitMs: DAY_MS }, t(0), t(4), stored(2 * HOUR_MS, t(0), t(4)))];
    expect(show(plan)).toEqual([
      "15T00:00-15T02:00 [15T00:00 15T01:30]",
      "15T02:00-15T04:00 [15T02:00 15T03:00]",
      "15T04:00-15T04:30 [15T04:00]",
    ]);
  });

  it("an incremental sync after a grain change widens its windows too, and then plans nothing more", () => {
    const hours = stored(HOUR_MS, t(0), t(2));
    // The hourly sync's short last window [02:00, 02:35), then a sync at 30 minutes.
    const ledger = [...hours, { start: t(2), end: t(2, 35), status: "done" as const }];
    const plan = [...planIncremental(spec(30 * MINUTE_MS), ledger, t(2, 35), t(3, 5))];
    // The hole [02:35, 03:05) is the half hours [02:30, 03:00) and [03:00, 03:05); the first cuts
    // through the stored [02:00, 02:35), so it is fetched with it: [02:00, 03:00) as two halves.
    expect(show(plan)).toEqual(["15T02:00-15T03:00 [15T02:00 15T02:30]", "15T03:00-15T03:05"]);
    const after = written(ledger, plan);
    expect(overlapping(after)).toBe(0);
    expect([...planIncremental(spec(30 * MINUTE_MS), after, t(3, 5), t(3, 5))]).toEqual([]);
  });
});

describe("plans of years are lazy", () => {
  it("a first run from 2000 yields its first window at once and counts 25 years of hours without holding them", () => {
    const first = { ...spec(HOUR_MS), limitMs: null, startMs: Date.UTC(2000, 0, 1) };
    const now = Date.UTC(2025, 0, 1);
    const plan = planIncremental(first, [], null, now);
    expect(plan.next().value).toMatchObject({ start: Date.UTC(2000, 0, 1), end: Date.UTC(2000, 0, 1) + HOUR_MS, reason: "new" });
    const summary = planSummary(planIncremental(first, [], null, now));
    expect(summary).toEqual({ count: (now - Date.UTC(2000, 0, 1)) / HOUR_MS, from: Date.UTC(2000, 0, 1), to: now });
  });

  it("holes in a long ledger are planned in order, each once", () => {
    const days = stored(DAY_MS, t(0) - 400 * DAY_MS, t(0));
    const ledger = days.filter((_, i) => i % 7 !== 3);
    const plan = [...planBackfill({ ...spec(DAY_MS), limitMs: DAY_MS }, t(0) - 400 * DAY_MS, t(0), ledger, { onlyMissing: true })];
    expect(plan.map((w) => w.start)).toEqual(days.filter((_, i) => i % 7 === 3).map((d) => d.start));
  });
});
