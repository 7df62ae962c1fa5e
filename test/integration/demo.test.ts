// The demo end to end, as a user runs it: the CLI in a temporary directory with no DATABASE_URL
// (embedded PGlite under ./.apm-sync), then its JSON report checked against the sandbox's
// ground truth, then a second run that must say it is incremental.
import { mkdtemp, readFile, realpath, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DemoReport } from "../../src/demo/report.ts";
import { DEMO_SANDBOX } from "../../src/demo/run-demo.ts";
import { startSandbox } from "../../src/sandbox/index.ts";
import type { GroundTruth } from "../../src/sandbox/types.ts";
import { runCli } from "../support/child-sync.ts";

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

type Report = DemoReport & { incremental: boolean; exitCode: number; seconds: number; reportPath: string };

describe("npm run demo", () => {
  let dir: string;
  let first: Report;
  let firstStderr: string;
  let truth: GroundTruth;
  let stopSandbox: () => Promise<void>;

  beforeAll(async () => {
    // Same options as the demo's sandbox: the data is a pure function of (seed, project, cube).
    const sandbox = await startSandbox(DEMO_SANDBOX);
    truth = sandbox.truth;
    stopSandbox = sandbox.stop;
    dir = await mkdtemp(join(tmpdir(), "apm-demo-"));
    const run = await runCli(["demo", "--json"], {}, { cwd: dir, timeoutMs: 180_000 });
    firstStderr = run.stderr;
    expect(run.code, run.stderr).toBe(0);
    first = JSON.parse(run.stdout) as Report;
  }, 200_000);

  afterAll(async () => {
    await stopSandbox?.();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("uses the embedded database under ./.apm-sync of the working directory", async () => {
    expect((await stat(join(dir, ".apm-sync", "pgdata"))).isDirectory()).toBe(true);
    expect(firstStderr).toContain("embedded database");
    expect(first.incremental).toBe(false);
    expect(first.exitCode).toBe(0);
  });

  it("writes the HTML report into the working directory and names it", async () => {
    expect(first.reportPath).toBe(join(await realpath(dir), "apm-sync-report.html"));
    const page = await readFile(first.reportPath, "utf8");
    expect(page).toContain("<svg");
    expect(page).toContain("Coverage");
  });

  it("covers about two days of every stream for both projects", () => {
    expect(first.coverage.map((c) => c.pcode).sort()).toHaveLength(2);
    // From two days ago (aligned down to the hour) to now - settle (10 minutes, on the 5-minute grid).
    for (const c of first.coverage) expect(c.to - c.from).toBeGreaterThanOrEqual(2 * DAY - 15 * 60_000);
    const streams = new Map(first.streams.map((s) => [s.stream, s]));
    for (const id of [
      "stat.transaction",
      "range.exception",
      "series.thread_count",
      "visitors.d",
      "project.event_history",
      "account.projects",
    ]) {
      expect(streams.get(id)?.rows, id).toBeGreaterThan(0);
    }
  });

  it("reports top services per day that equal the ground truth", () => {
    const days = [...new Set(first.topServicesPerDay.map((r) => r.day))];
    expect(days.length).toBeGreaterThanOrEqual(2);
    for (const day of days) {
      const dayStart = Date.parse(`${day}T00:00:00Z`);
      // Per (pcode, service): the sum of timeSum over the part of the day the sync covered.
      const sums = new Map<string, { pcode: number; service: string; timeSum: number; count: number }>();
      for (const c of first.coverage) {
        const from = Math.max(dayStart, c.from);
        const to = Math.min(dayStart + DAY, c.to);
        if (from >= to) continue;
        for (const r of truth.records(c.pcode, "stat.transaction", from, to)) {
          const key = `${c.pcode}/${r.service}`;
          const s = sums.get(key) ?? { pcode: c.pcode, service: String(r.service), timeSum: 0, count: 0 };
          s.timeSum += Number(r.timeSum);
          s.count += Number(r.count);
          sums.set(key, s);
        }
      }
      const expected = [...sums.values()].sort((a, b) => b.timeSum - a.timeSum || a.service.localeCompare(b.service)).slice(0, 3);
      const actual = first.topServicesPerDay
        .filter((r) => r.day === day)
        .map(({ pcode, service, timeSum, count }) => ({ pcode, service, timeSum, count }));
      expect(actual, day).toEqual(expected);
    }
  });

  it("reports hourly error rates that equal the ground truth", () => {
    expect(first.errorRateByHour.length).toBeGreaterThan(0);
    for (const row of first.errorRateByHour) {
      const hourStart = Date.parse(`${row.hour.replace(" ", "T")}:00Z`);
      let count = 0;
      let error = 0;
      for (const c of first.coverage) {
        const from = Math.max(hourStart, c.from);
        const to = Math.min(hourStart + HOUR, c.to);
        if (from >= to) continue;
        for (const r of truth.records(c.pcode, "stat.transaction", from, to)) {
          count += Number(r.count);
          error += Number(r.error);
        }
      }
      expect({ hour: row.hour, count: row.count, error: row.error }).toEqual({ hour: row.hour, count, error });
      expect(row.errorRate).toBeCloseTo(error / count, 12);
    }
  });

  it("a second run is incremental and says so", async () => {
    const run = await runCli(["demo", "--json"], {}, { cwd: dir, timeoutMs: 180_000 });
    expect(run.code, run.stderr).toBe(0);
    const second = JSON.parse(run.stdout) as Report;
    expect(second.incremental).toBe(true);
    expect(run.stderr).toContain("incremental run");
    const rows = (r: Report, id: string) => r.streams.find((s) => s.stream === id)?.rows ?? 0;
    // Only the recent windows (new + lookback) are fetched again.
    expect(rows(second, "stat.transaction")).toBeLessThan(rows(first, "stat.transaction") / 4);
  }, 150_000);
});
