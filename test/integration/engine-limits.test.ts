// Limits (issue 4): whatever the engine plans, splits or re-reads, the sandbox request log shows
// no request beyond its operation's window limit (catalogue windowLimitMs) and every window on
// the 5-minute grid. Covers every default stream (sync) and the long-window visitor streams.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OPERATIONS } from "../../src/catalogue/index.ts";
import { CUBE, DAY, type EngineHarness, HOUR, ledgerRows, startEngineHarness, windowViolations } from "../support/engine-harness.ts";

const NOW = Date.UTC(2026, 0, 10, 7, 43, 21);
// One day of history keeps the file under a minute on a loaded 2-CPU box; the start is on no grid.
const START = NOW - DAY;

let h: EngineHarness;
const timings: string[] = [];
/** The runs' last warnings and errors (the harness logs nothing below), said when a run does not exit 0. */
const problems = () => h.logs.slice(-20).join("\n");

beforeAll(async () => {
  h = await startEngineHarness({ now: NOW, maxRecords: 300, burstKeys: 400, projects: 2, env: { APM_START: "1d" } });
  let t0 = performance.now();
  const synced = await h.run({ command: "sync", mode: { kind: "sync" } });
  timings.push(`sync of every default stream ${Math.round(performance.now() - t0)} ms`);
  expect(synced.exitCode, problems()).toBe(0);
  t0 = performance.now();
  // visitor_d (31 days) and visitor_m (365 days) over a range longer than their limits.
  const back = await h.run({
    command: "backfill",
    mode: { kind: "backfill", from: NOW - 400 * DAY + 7 * HOUR, to: NOW - DAY },
    streams: ["visitors.d", "visitors.m"],
  });
  timings.push(`visitor backfill ${Math.round(performance.now() - t0)} ms`);
  expect(back.exitCode, problems()).toBe(0);
}, 300_000);

afterAll(async () => {
  process.stderr.write(`engine-limits: ${timings.join(", ")}, ${h?.sandbox.requestLog.length} requests\n`);
  await h?.close();
});

describe("request windows", () => {
  it("every windowed default stream was requested", () => {
    const windowed = OPERATIONS.filter((op) => op.stream?.enabledByDefault && op.windowLimitMs !== null).map((op) => op.id);
    const seen = new Set(h.sandbox.requestLog.filter((e) => e.stime !== null).map((e) => e.opId));
    expect(windowed.filter((id) => !seen.has(id))).toEqual([]);
    // The expected non-200s: the spec's groups path, which this (default) sandbox serves at the
    // docs' path instead, and the backfill's clock probe of the base URL (no credential sent).
    const failed = h.sandbox.requestLog.filter((e) => e.status !== 200).map((e) => `${e.status} ${e.opId} ${e.path}`);
    expect(failed).toEqual(["404 null /open/api/v2/json/groups", "404 null /"]);
  });

  it("no request exceeds its operation's limit, every window is on the 5-minute grid", () => {
    expect(windowViolations(h.sandbox.requestLog)).toEqual([]);
    // The limits were actually reached: full-length windows of the long streams were sent.
    const longest = (id: string) =>
      Math.max(...h.sandbox.requestLog.filter((e) => e.opId === id && e.stime !== null).map((e) => e.etime! - e.stime!));
    expect(longest("range.heap_use.avg")).toBe(HOUR);
    expect(longest("visitors.d")).toBeLessThanOrEqual(31 * DAY);
    expect(longest("visitors.m")).toBeLessThanOrEqual(365 * DAY);
    expect(longest("stat.transaction")).toBeLessThanOrEqual(DAY);
  });

  it("split windows are on the grid too, down to 5 minutes", async () => {
    const splits = (await ledgerRows(h.sql)).filter((l) => l.end - l.start < HOUR && l.stream.startsWith("stat."));
    expect(splits.length).toBeGreaterThan(0);
    expect(splits.some((l) => l.end - l.start === CUBE)).toBe(true);
    expect(splits.filter((l) => l.start % CUBE !== 0 || l.end % CUBE !== 0)).toEqual([]);
    // Nothing was asked beyond the incremental horizon (now - settle) or before the aligned start.
    const windowed = h.sandbox.requestLog.filter((e) => e.stime !== null && e.opId !== "visitors.d" && e.opId !== "visitors.m");
    expect(windowed.filter((e) => e.etime! > NOW - 10 * 60_000).map((e) => e.opId)).toEqual([]);
    expect(windowed.filter((e) => e.stime! < START - DAY)).toEqual([]);
  });
});
