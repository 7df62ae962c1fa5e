// The CLI as an operator meets it: a dry run sends nothing, JSON logs are JSON to the last line
// (progress included), usage errors exit 2, status reads at a glance.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cliEnv, runCli } from "../support/child-sync.ts";
import { type EngineHarness, HOUR, startEngineHarness } from "../support/engine-harness.ts";

describe("apm-sync CLI", () => {
  let h: EngineHarness;
  let env: Record<string, string>;

  beforeAll(async () => {
    // The CLI runs on the wall clock: the sandbox too (its clock is fixed at the test's start).
    h = await startEngineHarness({ now: Date.now(), burstKeys: 0 });
    env = cliEnv({ baseUrl: h.sandbox.url, databaseUrl: h.db.url, projects: h.sandbox.projects, accountToken: h.sandbox.accountToken });
  }, 60_000);

  afterAll(async () => {
    await h?.close();
  });

  it("backfill --dry-run prints the plan and the request count, and sends nothing", async () => {
    const from = new Date(Math.floor(Date.now() / HOUR) * HOUR - 30 * HOUR).toISOString();
    const to = new Date(Date.parse(from) + 6 * HOUR).toISOString();
    h.sandbox.clearLog();
    const run = await runCli(["backfill", "--from", from, "--to", to, "--streams", "stat.sql,range.heap_use", "--dry-run"], env);
    expect(run.code, run.stderr).toBe(0);
    expect(h.sandbox.requestLog).toHaveLength(0);
    // 2 projects x (stat.sql + heap avg + heap max) x 6 hourly windows.
    expect(run.stdout).toContain("dry run: 36 windows = 36 requests before splits; nothing was sent");
    expect(run.stdout.match(/range\.heap_use\.max\s+6 windows/g)).toHaveLength(2);
    const ledger = await h.sql`SELECT count(*)::int AS n FROM sync_windows`;
    expect(ledger[0]!.n).toBe(0);
  });

  it("--log-format json writes only JSON lines, ending with the progress of every planned window", async () => {
    const run = await runCli(["sync", "--streams", "stat.remote,visitors.h", "--log-format", "json"], { ...env, APM_START: "3h" });
    expect(run.code, run.stderr).toBe(0);
    const lines = run.stderr.split("\n").filter((l) => l.trim() !== "");
    expect(lines.length).toBeGreaterThan(0);
    const records = lines.map((l) => JSON.parse(l) as { msg: string; windowsDone?: number; windowsPlanned?: number });
    const progress = records.filter((r) => r.msg.startsWith("progress:"));
    expect(progress.length).toBeGreaterThan(0);
    const last = progress[progress.length - 1]!;
    expect(last.windowsPlanned).toBeGreaterThan(0);
    expect(last.windowsDone).toBe(last.windowsPlanned);
    // The summary goes to stdout, one line per stream.
    expect(run.stdout).toMatch(/^stat\.remote\s+windows\s+\d+/m);
    expect(run.stdout).toMatch(/^visitors\.h\s+windows\s+\d+/m);
  });

  it("a usage error exits 2 and names the problem", async () => {
    const bad = await runCli(["sync", "--streams", "stat.nope"], env);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("unknown stream(s): stat.nope");
    const noProject = await runCli(["sync", "--projects", "42"], env);
    expect(noProject.code).toBe(2);
    expect(noProject.stderr).toContain("42 have no token");
    const noUrl = await runCli(["sync"], { DATABASE_URL: h.db.url });
    expect(noUrl.code).toBe(2);
    expect(noUrl.stderr).toContain("APM_BASE_URL is not set");
  });

  it("status shows each project's streams with watermark and lag, and the last run", async () => {
    const run = await runCli(["status"], env);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain(`project ${h.pcodes[0]}`);
    expect(run.stdout).toMatch(/stat\.remote\s+\d{4}-\d\d-\d\d \d\d:\d\dZ\s+\d+m/);
    expect(run.stdout).toMatch(/last run: #\d+ sync ok/);
    for (const token of [h.sandbox.accountToken, ...h.sandbox.projects.map((p) => p.token)]) expect(run.stdout).not.toContain(token);
  });
});
