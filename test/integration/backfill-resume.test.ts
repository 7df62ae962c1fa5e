// `backfill` resumes (the help says "idempotent and resumable"): a real backfill is stopped by
// SIGTERM once some windows are done, and the same command run again plans and requests only the
// windows the ledger lacks (the sandbox's request log: not one request for a window the ledger
// had done), says how many it skipped as complete (text, --dry-run, JSON lines), and the data ends
// exact against the sandbox's ground truth. --refetch fetches the complete windows too.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ChildRun, cliEnv, runCli, spawnCli } from "../support/child-sync.ts";
import {
  compareWithTruth,
  DAY,
  type EngineHarness,
  HOUR,
  type LedgerRow,
  ledgerRows,
  ledgerViolations,
  MINUTE,
  startEngineHarness,
} from "../support/engine-harness.ts";

const TO = Date.UTC(2026, 1, 18);
const FROM = TO - DAY;
const NOW = TO + 10 * MINUTE;
const STREAMS = ["stat.transaction", "stat.sql", "range.sql"];
// Hourly windows of 3 streams for 2 projects, one day.
const WINDOWS = 24 * STREAMS.length * 2;
const iso = (ms: number) => new Date(ms).toISOString();
const ARGS = ["backfill", "--from", iso(FROM), "--to", iso(TO), "--streams", STREAMS.join(",")];

let h: EngineHarness;
let env: Record<string, string>;

/** Resolves once `ready()` holds; fails if the child exits first. */
async function until(child: ChildRun, ready: () => Promise<boolean>): Promise<void> {
  let exited = false;
  void child.exited.then(() => {
    exited = true;
  });
  while (!(await ready())) {
    if (exited) throw new Error(`the backfill ended before the condition held:\n${child.stderr().slice(-2000)}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** The sandbox's window requests, as `op pcode start..end`. */
const requested = () =>
  h.sandbox.requestLog
    .filter((e) => e.opId !== null && e.stime !== null && e.etime !== null)
    .map((e) => ({ ...e, stime: e.stime!, etime: e.etime! }));

/** JSON lines of a run with --log-format json. */
const records = (stdout: string) =>
  stdout
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as Record<string, unknown>);

async function exact(): Promise<void> {
  expect(await ledgerViolations(h.sql, STREAMS, FROM)).toEqual([]);
  for (const op of STREAMS)
    for (const pcode of h.pcodes) {
      const { diff, truthKeys } = await compareWithTruth(h, op, pcode, FROM, TO);
      expect({ op, pcode, diff }).toEqual({ op, pcode, diff: [] });
      expect(truthKeys).toBeGreaterThan(0);
    }
  const done = await ledgerRows(h.sql, { status: "done" });
  expect(done.filter((l) => l.start >= FROM && l.end <= TO)).toHaveLength(WINDOWS);
}

beforeAll(async () => {
  // Slow answers, few windows at once: the signal comes while most of the plan is still ahead.
  h = await startEngineHarness({ now: NOW, burstKeys: 0, projects: 2, latencyMs: [60, 90] });
  env = cliEnv({
    baseUrl: h.sandbox.url,
    databaseUrl: h.db.url,
    projects: h.sandbox.projects,
    extra: { APM_START: iso(FROM), APM_LOOKBACK: "0" },
  });
}, 60_000);
afterAll(() => h?.close());

describe("backfill run again after SIGTERM", () => {
  let done: LedgerRow[] = [];

  it("stops on SIGTERM with some windows done, and the progress says stopped, not a finished count", async () => {
    const child = spawnCli(ARGS, { ...env, APM_WINDOW_CONCURRENCY: "2" });
    const doneWindows = async () => {
      const [row] = await h.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM sync_windows WHERE status = 'done'`;
      return row!.n;
    };
    await until(child, async () => (await doneWindows()) >= 24);
    const exit = await child.kill("SIGTERM");
    expect(exit.code, exit.stderr.slice(-2000)).toBe(143);
    done = await ledgerRows(h.sql, { status: "done" });
    expect(done.length).toBeGreaterThanOrEqual(24);
    expect(done.length).toBeLessThan(WINDOWS);
    expect(done.every((l) => l.end - l.start === HOUR)).toBe(true);
    const last =
      exit.stderr
        .split("\n")
        .filter((l) => l.includes("progress:"))
        .at(-1) ?? "";
    expect(last).toMatch(new RegExp(`progress: stopped by a signal: ${done.length} windows done, \\d+ left for the next run`));
    expect(last).not.toContain("ETA");
  }, 120_000);

  it("--dry-run plans only the windows the ledger lacks and says how many it skips, in text and JSON", async () => {
    h.sandbox.clearLog();
    const text = await runCli([...ARGS, "--dry-run"], env);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toContain(`${done.length} windows the ledger has complete are skipped (--refetch fetches them again)`);
    expect(text.stdout).toContain(`dry run: ${WINDOWS - done.length} windows = ${WINDOWS - done.length} requests before splits`);
    const json = records((await runCli([...ARGS, "--dry-run"], { ...env, APM_LOG_FORMAT: "json" })).stdout);
    const planned = json.filter((r) => r.msg === "planned");
    expect(planned).toHaveLength(STREAMS.length * 2);
    expect(planned.reduce((n, r) => n + (r.complete as number), 0)).toBe(done.length);
    expect(json.find((r) => r.msg === "dry run: nothing was sent")).toMatchObject({
      windows: WINDOWS - done.length,
      complete: done.length,
    });
    expect(requested()).toEqual([]);
  });

  it("the same backfill again requests no window the ledger has done, says how many it skipped, and the data ends exact", async () => {
    h.sandbox.clearLog();
    const run = await runCli(ARGS, { ...env, APM_LOG_FORMAT: "json" }, { timeoutMs: 300_000 });
    expect(run.code, run.stderr.slice(-2000)).toBe(0);
    const log = requested();
    const again = log.filter((e) => done.some((d) => d.stream === e.opId && d.pcode === e.pcode && d.start < e.etime && e.stime < d.end));
    expect(again.map((e) => `${e.opId} ${e.pcode} ${iso(e.stime)}`)).toEqual([]);
    expect(log).toHaveLength(WINDOWS - done.length);
    expect(records(run.stdout).find((r) => r.msg === "complete windows skipped")).toMatchObject({ complete: done.length });
    await exact();
  }, 300_000);

  it("--refetch fetches every window again, complete ones included; the data stays exact", async () => {
    h.sandbox.clearLog();
    const run = await runCli([...ARGS, "--refetch"], env, { timeoutMs: 300_000 });
    expect(run.code, run.stderr.slice(-2000)).toBe(0);
    expect(requested()).toHaveLength(WINDOWS);
    expect(run.stdout).not.toContain("the ledger has complete");
    await exact();
  }, 300_000);
});
