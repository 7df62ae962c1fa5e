// The bench's CPU budget (jobs/bench-budget.ts): the cores' busy share between two readings, and
// the CPU a row a target ratio to the plain COPY allows at it.
import { describe, expect, it } from "vitest";
import { allowedUsPerRow, busyShare, coreTicks, runBudget, stolenShare } from "../../jobs/bench-budget.ts";

describe("the bench's CPU budget", () => {
  it("takes the busy and the stolen share of the ticks between two readings", () => {
    const before = { busy: 1_000, total: 4_000, steal: 10, cores: 2 };
    const after = { busy: 1_800, total: 5_000, steal: 60, cores: 2 };
    expect(busyShare(before, after)).toBeCloseTo(0.8);
    expect(stolenShare(before, after)).toBeCloseTo(0.05);
    expect(busyShare(before, before)).toBeNull();
    expect(busyShare(null, before)).toBeNull();
    expect(stolenShare(before, null)).toBeNull();
  });

  it("allows the CPU a row that the cores' busy time holds at the target's rate", () => {
    // 0.5 of 200,000 rows/s is 100,000 rows/s: 2 cores fully busy hold 20 us a row, 80% busy 16.
    expect(allowedUsPerRow(0.5, 200_000, 2, 1)).toBeCloseTo(20);
    expect(allowedUsPerRow(0.5, 200_000, 2, 0.8)).toBeCloseTo(16);
  });

  it("sums a run's CPU over the engine, its backends and the sandbox, or says nothing when one is unread", () => {
    const run = { rows: 500_000, cpuSeconds: 7, serverCpuSeconds: 4, sandboxCpu: 0.5, busyShare: 0.8, cores: 2 };
    expect(runBudget(run, 200_000)).toEqual({ usPerRow: 23, busy: 0.8, allowed: expect.closeTo(16) });
    expect(runBudget({ ...run, serverCpuSeconds: null }, 200_000)).toBeNull();
    expect(runBudget({ ...run, busyShare: null }, 200_000)).toBeNull();
  });

  it("reads the machine's cores and ticks on Linux", () => {
    const now = coreTicks();
    if (process.platform !== "linux") return expect(now).toBeNull();
    expect(now!.cores).toBeGreaterThan(0);
    expect(now!.busy).toBeLessThanOrEqual(now!.total);
    expect(now!.steal).toBeLessThanOrEqual(now!.busy);
  });
});
