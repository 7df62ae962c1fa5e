// Faults outside the API (docs/design.md "Faults outside the API"): the database goes away for 5 s in the middle of a
// CLI backfill (every connection cut, new ones refused, through a proxy: the shared Postgres is
// never touched), and the scheduler stops the CLI with SIGTERM or SIGINT. Nothing is lost,
// nothing is half-written, and no stack trace ends the process.
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cliEnv, spawnCli, waitUntil } from "../support/child-sync.ts";
import { compareWithTruth, DAY, type EngineHarness, ledgerRows, ledgerViolations, startEngineHarness } from "../support/engine-harness.ts";
import { type PgProxy, startPgProxy } from "../support/pg-proxy.ts";
import { waitFor } from "../support/wait-for.ts";

const NOW = Date.UTC(2026, 1, 20);
const FROM = Date.UTC(2026, 1, 16);
const TO = FROM + 2 * DAY;
const STREAMS = ["stat.transaction", "stat.sql", "range.sql", "range.exception"];
const args = ["backfill", "--from", new Date(FROM).toISOString(), "--to", new Date(TO).toISOString(), "--streams", STREAMS.join(",")];

/** The CLI's environment: the harness's sandbox, slow requests so that the backfill lasts. */
function backfillEnv(h: EngineHarness, databaseUrl: string, extra: Record<string, string> = {}) {
  return cliEnv({
    baseUrl: h.sandbox.url,
    databaseUrl,
    projects: h.sandbox.projects,
    extra: { APM_START: new Date(FROM).toISOString(), APM_RPS: "60", ...extra },
  });
}

/** The stopped run is marked `status`, nothing is half-written, and a re-run lands the truth. */
async function expectRecovered(h: EngineHarness, env: Record<string, string>, status: string) {
  const [run] = await h.sql<{ status: string }[]>`SELECT status FROM sync_runs ORDER BY id DESC LIMIT 1`;
  expect(run?.status).toBe(status);
  expect(await ledgerViolations(h.sql, STREAMS, FROM)).toEqual([]);
  const rerun = await spawnCli(args, env).exited;
  expect(rerun.code, rerun.stderr.slice(-2000)).toBe(0);
  await expectTruth(h);
}

async function expectTruth(h: EngineHarness) {
  expect(await ledgerViolations(h.sql, STREAMS, FROM)).toEqual([]);
  const ledger = await ledgerRows(h.sql);
  expect(ledger.filter((l) => l.status === "failed")).toEqual([]);
  for (const op of STREAMS) {
    const { diff, truthKeys } = await compareWithTruth(h, op, h.pcodes[0]!, FROM, TO);
    expect({ op, diff }).toEqual({ op, diff: [] });
    expect(truthKeys).toBeGreaterThan(0);
  }
}

describe("the database goes away for 5 s in the middle of a backfill", () => {
  let h: EngineHarness;
  let proxy: PgProxy;
  beforeAll(async () => {
    h = await startEngineHarness({ now: NOW, maxRecords: 300, burstKeys: 0, projects: 1 });
    proxy = await startPgProxy(h.db.url);
  });
  afterAll(async () => {
    await proxy?.close();
    await h?.close();
  });

  it("retries instead of failing: exit 0, no failed window, the ground truth exactly", async () => {
    // Slow requests keep the backfill going for the whole cut.
    const env = backfillEnv(h, proxy.url);
    const child = spawnCli(args, env, { timeoutMs: 150_000 });
    const reached = await waitUntil(child, () => h.sandbox.requestLog.length >= 60);
    // In the middle: some windows committed before the cut (on a slow machine the first commits
    // came after the 60th request: cut after 0 windows, the run then all after it).
    let ended = false;
    void child.exited.then(() => {
      ended = true;
    });
    await waitFor("a window committed before the cut", async () => ended || (await ledgerRows(h.sql)).length > 0, 30_000);
    const before = (await ledgerRows(h.sql)).length;
    proxy.cut(5);
    const exit = await child.exited;
    process.stderr.write(`resilience: database cut after ${before} windows; the backfill ended in ${exit.durationMs} ms\n`);
    if (exit.code !== 0) process.stderr.write(`resilience child stderr:\n${exit.stderr.slice(-4000)}\n`);
    expect({ reached, code: exit.code }).toEqual({ reached: "ready", code: 0 });
    expect(exit.stderr).not.toMatch(/TypeError|uncaught|unhandled/i);
    expect(exit.stdout + exit.stderr).toMatch(/database unavailable/);
    expect(before).toBeGreaterThan(0);
    await expectTruth(h);
  });

  it("is away as the CLI starts (a restart as a scheduled run starts): the opening waits it out, exit 0", async () => {
    // Every connection accepted and dropped for 4 s: the first statement (select 1) and any
    // migration meet a lost connection, not a refused one (a wrong address exits 2 at once).
    proxy.cut(4);
    const exit = await spawnCli(args, backfillEnv(h, proxy.url), { timeoutMs: 60_000 }).exited;
    expect({ code: exit.code, stderr: exit.stderr }).toEqual({
      code: 0,
      stderr: expect.stringMatching(/database unavailable \([A-Z_]+\) during the warehouse's opening/),
    });
    expect(exit.durationMs).toBeGreaterThan(3_000);
    await expectTruth(h);
  });
});

describe.each([
  ["SIGTERM", 143],
  ["SIGINT", 130],
] as const)("%s in the middle of a backfill", (signal, code) => {
  let h: EngineHarness;
  beforeAll(async () => {
    h = await startEngineHarness({ now: NOW, maxRecords: 300, burstKeys: 0, projects: 1 });
  });
  afterAll(() => h?.close());

  it(`exits ${code} within the grace, the run cancelled, nothing half-written; a re-run lands the truth`, async () => {
    const env = backfillEnv(h, h.db.url, { APM_SHUTDOWN_GRACE: "3s" });
    const child = spawnCli(args, env);
    expect(await waitUntil(child, () => h.sandbox.requestLog.length >= 40)).toBe("ready");
    const t0 = performance.now();
    const exit = await child.kill(signal);
    const ms = performance.now() - t0;
    expect({ code: exit.code, signal: exit.signal }, exit.stderr.slice(-2000)).toEqual({ code, signal: null });
    expect(ms).toBeLessThan(3_000 + 5_000);
    expect(exit.stdout).toMatch(/cancelled/);
    await expectRecovered(h, env, "cancelled");
  });
});

describe("an exception nobody caught (the last resort)", () => {
  let h: EngineHarness;
  let dir: string;
  beforeAll(async () => {
    h = await startEngineHarness({ now: NOW, maxRecords: 300, burstKeys: 0, projects: 1 });
    dir = await mkdtemp(join(tmpdir(), "apm-fault-"));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
    await h?.close();
  });

  it("is logged, the run marked failed, exit 1; a re-run lands the truth", async () => {
    // Thrown from a timer callback, outside any promise, as the driver's nextWrite defect was.
    const preload = join(dir, "throw-on-usr2.mjs");
    await writeFile(preload, `process.on("SIGUSR2", () => setImmediate(() => { throw new Error("injected fault"); }));\n`);
    const env = backfillEnv(h, h.db.url);
    const child = spawnCli(args, env, { preload });
    expect(await waitUntil(child, () => h.sandbox.requestLog.length >= 40)).toBe("ready");
    child.child.kill("SIGUSR2");
    const exit = await child.exited;
    expect(exit.code, exit.stderr.slice(-2000)).toBe(1);
    expect(exit.stderr).toMatch(/uncaught exception: Error: injected fault/);
    await expectRecovered(h, env, "failed");
  });
});
