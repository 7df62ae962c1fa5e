// The CLI as an operator meets it: a dry run sends nothing, JSON logs are JSON to the last line on
// both streams (progress, summary and warnings with their fields), summaries sorted and counted
// right, usage errors exit 2, status reads at a glance.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSandbox } from "../../src/sandbox/index.ts";
import { cliEnv, runCli } from "../support/child-sync.ts";
import { createTestDatabase } from "../support/db.ts";
import { DAY, type EngineHarness, HOUR, startEngineHarness } from "../support/engine-harness.ts";

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

  it("--log-format json writes nothing but JSON lines on stdout and stderr: progress, summary records, the run's end", async () => {
    const run = await runCli(["sync", "--streams", "visitors.h,stat.remote,account.projects", "--log-format", "json"], {
      ...env,
      APM_START: "3h",
    });
    expect(run.code, run.stderr).toBe(0);
    const records = (text: string) =>
      text
        .split("\n")
        .filter((l) => l !== "")
        .map((l) => JSON.parse(l) as Record<string, unknown> & { msg: string });
    const logs = records(run.stderr);
    const progress = logs.filter((r) => r.msg.startsWith("progress:"));
    expect(progress.length).toBeGreaterThan(0);
    const last = progress[progress.length - 1]!;
    expect(last.windowsPlanned).toBeGreaterThan(0);
    expect(last.windowsDone).toBe(last.windowsPlanned);
    const out = records(run.stdout);
    // One record per stream, sorted by stream id, with the counters as fields; then the run's end.
    const summary = out.filter((r) => r.msg === "stream summary");
    expect(summary.map((r) => r.stream)).toEqual(["account.projects", "stat.remote", "visitors.h"]);
    expect(summary[0]).toMatchObject({ windows: 1, failed: 0, level: 30 });
    expect(typeof summary[1]!.rows).toBe("number");
    expect(out[out.length - 1]).toMatchObject({ msg: expect.stringMatching(/^run \d+: complete$/), status: "complete" });
    // status too: its document on one line.
    const status = await runCli(["status", "--log-format", "json"], env);
    expect(status.stdout.trim().split("\n")).toHaveLength(1);
    expect(JSON.parse(status.stdout)).toMatchObject({ streams: expect.any(Array) });
  });

  it("prints the text summary sorted by stream id, with plurals that agree", async () => {
    const run = await runCli(["sync", "--streams", "visitors.h,stat.remote,account.projects"], { ...env, APM_START: "3h" });
    expect(run.code, run.stderr).toBe(0);
    const lines = run.stdout.trim().split("\n");
    expect(lines.map((l) => l.split(" ")[0])).toEqual(["account.projects", "stat.remote", "visitors.h", "run"]);
    expect(lines[0]).toMatch(/^account\.projects\s+1 window\s+\d+ rows?\s+1 request\s+0 retries\s+0 splits/);
    expect(lines[1]).toMatch(/^stat\.remote\s+\d+ windows\s/);
    expect(lines[3]).toMatch(/^run \d+: complete$/);
  });

  it("puts stream, pcode and window of a truncated window into the warning's fields", async () => {
    const [capped, db] = await Promise.all([startSandbox({ maxRecords: 300, burstKeys: 400, projects: 1 }), createTestDatabase()]);
    try {
      const day = Math.floor(Date.now() / DAY) * DAY - DAY;
      const run = await runCli(
        ["backfill", "--from", new Date(day).toISOString(), "--to", new Date(day + DAY).toISOString(), "--streams", "stat.transaction"],
        { ...cliEnv({ baseUrl: capped.url, databaseUrl: db.url, projects: capped.projects }), APM_LOG_FORMAT: "json" },
      );
      expect(run.code, run.stderr).toBe(0);
      const warnings = run.stderr
        .split("\n")
        .filter((l) => l !== "")
        .map((l) => JSON.parse(l) as Record<string, unknown> & { msg: string })
        .filter((r) => r.msg.includes("still truncated"));
      expect(warnings.length).toBeGreaterThan(0);
      const w = warnings[0]!;
      expect(w).toMatchObject({ level: 40, stream: "stat.transaction", pcode: capped.projects[0]!.pcode });
      const [start, end] = [w.windowStart, w.windowEnd].map((t) => Date.parse(String(t)));
      expect(end! - start!).toBe(HOUR);
      expect(w.msg).toContain(`window ${new Date(start!).toISOString().slice(0, 16)}`);
    } finally {
      await Promise.all([capped.stop(), db.drop()]);
    }
  });

  it("a backfill shorter than a coarse stream's grain leaves it out unless it is named; times take the APM_START forms", async () => {
    const plan = await runCli(["backfill", "--from", "4h", "--to", "now", "--dry-run"], env);
    expect(plan.code, plan.stderr).toBe(0);
    expect(plan.stdout).not.toMatch(/^\d+\s+visitors\.(m|d)\s/m);
    expect(plan.stdout).toMatch(/left out of this backfill .*: visitors\.d, visitors\.m/);
    expect(plan.stdout).toMatch(/stat\.sql\s+[45] windows/);
    const named = await runCli(["backfill", "--from", "2d", "--to", "1d", "--streams", "visitors.m,stat.sql", "--dry-run"], env);
    expect(named.code, named.stderr).toBe(0);
    expect(named.stdout).toMatch(/visitors\.m\s+[12] windows?\s/);
    expect(named.stdout).toMatch(/stat\.sql\s+2[45] windows/);
    expect(named.stdout).not.toContain("left out");
  });

  it("`streams` and `sync --streams` agree on what cannot be synced", async () => {
    const streams = await runCli(["streams", "--json"], {});
    const lines = JSON.parse(streams.stdout) as { id: string; syncable: boolean }[];
    for (const [id, what] of [
      ["extra.fullgclog", "a docs-only operation"],
      ["series.apdex.avg.oids", "a client-only operation (an average over a chosen agent list)"],
    ] as const) {
      expect(lines.find((l) => l.id === id)).toMatchObject({ syncable: false });
      const run = await runCli(["sync", "--streams", id], env);
      expect({ id, code: run.code }).toEqual({ id, code: 2 });
      expect(run.stderr).toContain(`${id} is ${what}: it has no table and is not synced`);
    }
  });

  it("a usage error exits 2 and names the problem", async () => {
    const bad = await runCli(["sync", "--streams", "stat.nope"], env);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('unknown stream "stat.nope"');
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
