// Progress plans first (issue 19 point 6): the planned window count used to grow as streams
// started (707 -> 1,219 -> ... -> 4,344), so the ETA said "3s" minutes before the end. Now every
// project target is counted from its ledger before the first fetch, the total never grows once
// the plan is complete, no ETA is given before that, and windows a run will not fetch after all
// (a refused token, a lock held elsewhere) leave the total, so done reaches it.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ProgressSink } from "../../src/engine/progress.ts";
import { DAY, type EngineHarness, startEngineHarness } from "../support/engine-harness.ts";

const NOW = Date.UTC(2026, 0, 10, 7, 43, 21);

type Event =
  | { kind: "planned"; stream: string; n: number }
  | { kind: "allPlanned" }
  | { kind: "done"; stream: string }
  | { kind: "failed"; stream: string };

function recorder(): { sink: ProgressSink; events: Event[] } {
  const events: Event[] = [];
  return {
    events,
    sink: {
      planned: (stream, n) => void events.push({ kind: "planned", stream, n }),
      allPlanned: () => void events.push({ kind: "allPlanned" }),
      windowDone: (stream) => void events.push({ kind: "done", stream }),
      windowFailed: (stream) => void events.push({ kind: "failed", stream }),
      refreshing() {},
      stop() {},
    },
  };
}

/** The running planned total after each event, and where the plan was complete. */
function totals(events: readonly Event[]) {
  let planned = 0;
  const after: number[] = [];
  for (const e of events) {
    if (e.kind === "planned") planned += e.n;
    after.push(planned);
  }
  const settled = events.filter((e) => e.kind === "done" || e.kind === "failed").length;
  return {
    after,
    complete: events.findIndex((e) => e.kind === "allPlanned"),
    done: settled,
    failed: events.filter((e) => e.kind === "failed").length,
  };
}

let h: EngineHarness;

beforeAll(async () => {
  h = await startEngineHarness({ now: NOW, projects: 2, env: { APM_START: "1d" } });
});
afterAll(async () => h?.close());

describe("progress", () => {
  it("counts the whole plan before the first project window, never grows after it, and done reaches it", async () => {
    const { sink, events } = recorder();
    const result = await h.run({ command: "sync", mode: { kind: "sync" } }, {}, sink);
    expect(result.exitCode).toBe(0);
    const { after, complete, done } = totals(events);
    expect(events.filter((e) => e.kind === "allPlanned")).toHaveLength(1);
    // Account lists run before the plan is complete; no project stream's window does.
    const firstProjectDone = events.findIndex((e) => e.kind === "done" && !e.stream.startsWith("account."));
    expect(firstProjectDone).toBeGreaterThan(complete);
    // Once complete, the total only shrinks (a re-plan under the lock), and every planned window was done.
    expect(events.slice(complete).filter((e) => e.kind === "planned" && e.n > 0)).toEqual([]);
    expect(Math.max(...after.slice(complete))).toBe(after[complete]);
    expect(after.at(-1)).toBe(done);
    expect(done).toBeGreaterThan(500);
    expect(totals(events).failed).toBe(0);
  });

  it("windows a refused project token stops leave the plan: done still reaches the total", async () => {
    h.setNow(NOW + DAY);
    const [good, bad] = h.sandbox.projects;
    const { sink, events } = recorder();
    const result = await h.run(
      { command: "sync", mode: { kind: "sync" } },
      { APM_PROJECTS: `${good!.pcode}:${good!.token},${bad!.pcode}:not-the-token` },
      sink,
    );
    expect(result.exitCode).toBe(1);
    const { after, done, failed } = totals(events);
    // The refused window shows as failed, not as done (issue 19 point 1).
    expect(failed).toBeGreaterThan(0);
    expect(failed).toBe([...result.streams.values()].reduce((n, c) => n + c.failed, 0));
    const plannedFirst = Math.max(...after);
    expect(after.at(-1)).toBe(done);
    expect(after.at(-1)).toBeLessThan(plannedFirst);
  });
});
