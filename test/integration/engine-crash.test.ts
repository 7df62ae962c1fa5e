// Crash safety (issue 4): the real CLI backfills 2 days of every stat type and range table while
// the test kills it with SIGKILL at several points (by the sandbox's request count); after each
// kill the ledger, the rows and the watermark must agree (a window is committed whole or not at
// all, the watermark never passes an unwritten window), and a re-run of the same backfill must
// reach the sandbox ground truth exactly.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cliEnv, spawnCli, waitUntil } from "../support/child-sync.ts";
import {
  advisoryLocksHeld,
  COUNTED_STREAMS,
  compareWithTruth,
  DAY,
  type EngineHarness,
  HOUR,
  ledgerRows,
  ledgerViolations,
  startEngineHarness,
  watermarkRows,
} from "../support/engine-harness.ts";
import { coverageDiffs, rollupDiffs } from "../support/rollup-checks.ts";

const CAP = 300;
// Each day's burst cube holds 400 distinct keys per type: above the cap even at 5 minutes.
const BURST = 400;
const NOW = Date.UTC(2026, 0, 10);
const FROM = Date.UTC(2026, 0, 6);
const TO = FROM + 2 * DAY;
const STREAMS = COUNTED_STREAMS;
// Sandbox requests after which the child is killed: early (few windows committed), middle, late.
// A full run takes about 1,250 requests.
const KILL_AFTER = [40, 450, 950];

const args = ["backfill", "--from", new Date(FROM).toISOString(), "--to", new Date(TO).toISOString(), "--streams", STREAMS.join(",")];

/** Waits (up to 5 s) until the killed child's sessions are gone, so its locks are released. */
async function locksReleased(hh: EngineHarness): Promise<number> {
  const until = Date.now() + 5000;
  let held = await advisoryLocksHeld(hh.sql);
  while (held > 0 && Date.now() < until) {
    await new Promise((r) => setTimeout(r, 50));
    held = await advisoryLocksHeld(hh.sql);
  }
  return held;
}

/** Waits (up to 30 s) until the child has committed a window, or exited. */
async function oneCommitted(hh: EngineHarness, child: { exited: Promise<unknown> }): Promise<void> {
  let exited = false;
  void child.exited.then(() => {
    exited = true;
  });
  const until = Date.now() + 30_000;
  while (!exited && Date.now() < until && (await ledgerRows(hh.sql)).length === 0) await new Promise((r) => setTimeout(r, 5));
}

/**
 * Starts the CLI, kills it with SIGKILL once the sandbox has answered `k` more requests and a
 * window is committed (on a loaded machine the first commit can come after request `k`), and
 * checks what it left: no lock, no failed window, ledger/rows/watermark consistent, and no
 * watermark lower than one seen before (`seen`, updated).
 */
async function killAndCheck(
  hh: EngineHarness,
  argv: string[],
  env: Record<string, string>,
  k: number,
  startMs: number,
  seen: Map<string, number>,
) {
  const before = hh.sandbox.requestLog.length;
  const child = spawnCli(argv, env);
  const reached = await waitUntil(child, () => hh.sandbox.requestLog.length - before >= k);
  await oneCommitted(hh, child);
  const exit = await child.kill("SIGKILL");
  const ledger = await ledgerRows(hh.sql);
  process.stderr.write(
    `engine-crash: ${argv[0]} killed after ${hh.sandbox.requestLog.length - before} requests, ${exit.durationMs} ms; ledger holds ${ledger.length} windows\n`,
  );
  expect({ reached, signal: exit.signal }, exit.stderr.slice(-2000)).toEqual({ reached: "ready", signal: "SIGKILL" });
  // Some windows were committed before the kill (else this point tests nothing).
  expect(ledger.length).toBeGreaterThan(0);
  expect(await locksReleased(hh)).toBe(0);
  expect(await ledgerViolations(hh.sql, STREAMS, startMs)).toEqual([]);
  expect(ledger.filter((l) => l.status === "failed")).toEqual([]);
  // The rollups commit with their windows: a kill leaves them equal to the raw rows and the ledger.
  expect(await rollupDiffs(hh.sql)).toEqual([]);
  expect(await coverageDiffs(hh.sql)).toEqual([]);
  for (const wm of await watermarkRows(hh.sql)) {
    const key = `${wm.stream}/${wm.pcode}`;
    expect({ key, watermark: wm.watermark }).toEqual({ key, watermark: Math.max(wm.watermark, seen.get(key) ?? 0) });
    seen.set(key, wm.watermark);
  }
}

/** Per stream: the ledger tiles [from, to) without gap or failure and the sums equal the truth. */
async function expectTruth(hh: EngineHarness, from: number, to: number) {
  const ledger = await ledgerRows(hh.sql);
  const pcode = hh.pcodes[0]!;
  for (const opId of STREAMS) {
    const mine = ledger.filter((l) => l.stream === opId && l.pcode === pcode);
    let at = from;
    for (const l of mine) {
      expect({ opId, start: l.start, failed: l.status === "failed" }).toEqual({ opId, start: at, failed: false });
      at = l.end;
    }
    expect({ opId, end: at }).toEqual({ opId, end: to });
    const { diff, truthKeys } = await compareWithTruth(hh, opId, pcode, from, to);
    expect(truthKeys).toBeGreaterThan(0);
    expect({ opId, diff }).toEqual({ opId, diff: [] });
    // The burst cube of each day is the one window the cap still cuts at 5 minutes.
    const truncated = mine.filter((l) => l.status === "truncated").map((l) => l.start);
    for (let day = from - (from % DAY); day < to; day += DAY) {
      const burst = hh.truth.burstCube(pcode, day)!;
      if (burst >= from && burst < to) expect({ opId, truncated }).toEqual({ opId, truncated: expect.arrayContaining([burst]) });
    }
  }
}

describe("kill -9 during a backfill, then re-run", () => {
  let h: EngineHarness;
  let env: Record<string, string>;
  const seen = new Map<string, number>();

  beforeAll(async () => {
    h = await startEngineHarness({ now: NOW, maxRecords: CAP, burstKeys: BURST, projects: 1 });
    // APM_START = FROM: the backfill's windows are the stream's first ones, so the watermark moves.
    env = cliEnv({ baseUrl: h.sandbox.url, databaseUrl: h.db.url, projects: h.sandbox.projects, extra: { APM_START: args[2]! } });
  });
  afterAll(async () => {
    await h?.close();
  });

  // --refetch: each killed run fetches the whole range again (a backfill otherwise resumes, and the
  // later kill points would come after the end of what is left).
  it.each(KILL_AFTER)("killed after %i requests: the ledger, the rows and the watermark agree", async (k) => {
    await killAndCheck(h, [...args, "--refetch"], env, k, FROM, seen);
  });

  it("a re-run of the same backfill completes (resumed: what the kills left) and reaches the ground truth exactly", async () => {
    const rerun = await spawnCli(args, env).exited;
    process.stderr.write(`engine-crash: backfill re-run to completion took ${rerun.durationMs} ms\n`);
    expect({ code: rerun.code }, rerun.stderr.slice(-3000)).toEqual({ code: 0 });
    expect(await ledgerViolations(h.sql, STREAMS, FROM)).toEqual([]);
    await expectTruth(h, FROM, TO);
    expect(await rollupDiffs(h.sql)).toEqual([]);
    // Every stream's watermark reached the end of the range, and only there.
    const wms = (await watermarkRows(h.sql)).map((w) => `${w.stream} ${new Date(w.watermark).toISOString()}`);
    expect(wms.sort()).toEqual(STREAMS.map((s) => `${s} ${new Date(TO).toISOString()}`).sort());
  });
});

// `sync` plans from the watermark and the ledger's gaps: after a kill, the next sync must
// find every window the killed one did not commit. It runs on the wall clock (the CLI's own).
describe("kill -9 during an incremental sync, then sync again", () => {
  const t0 = Math.floor(Date.now() / 60_000) * 60_000;
  const start = Math.floor((t0 - DAY) / HOUR) * HOUR;
  const sync = ["sync", "--streams", STREAMS.join(",")];
  let h: EngineHarness;
  let env: Record<string, string>;
  const seen = new Map<string, number>();

  beforeAll(async () => {
    h = await startEngineHarness({ now: t0, maxRecords: CAP, burstKeys: BURST, projects: 1 });
    env = cliEnv({
      baseUrl: h.sandbox.url,
      databaseUrl: h.db.url,
      projects: h.sandbox.projects,
      extra: { APM_START: new Date(start).toISOString() },
    });
  });
  afterAll(async () => {
    await h?.close();
  });

  it.each([60, 350])("killed after %i requests: the ledger, the rows and the watermark agree", async (k) => {
    await killAndCheck(h, sync, env, k, start, seen);
  });

  it("the next sync completes and reaches the ground truth up to its horizon", async () => {
    const rerun = await spawnCli(sync, env).exited;
    process.stderr.write(`engine-crash: sync after the kills took ${rerun.durationMs} ms\n`);
    expect({ code: rerun.code }, rerun.stderr.slice(-3000)).toEqual({ code: 0 });
    expect(await ledgerViolations(h.sql, STREAMS, start)).toEqual([]);
    const wms = await watermarkRows(h.sql);
    const horizon = Math.min(...wms.map((w) => w.watermark));
    expect({ streams: wms.length, sameEnd: wms.every((w) => w.watermark === horizon) }).toEqual({ streams: STREAMS.length, sameEnd: true });
    // The horizon is now - 10 min settle, on the 5-minute grid.
    expect(horizon).toBeGreaterThan(t0 - 20 * 60_000);
    await expectTruth(h, start, horizon);
  });
});
