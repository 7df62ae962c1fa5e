// Crash safety (issue 4): the real CLI backfills 2 days of every stat type and range table while
// the test kills it with SIGKILL at several points (by the sandbox's request count); after each
// kill the ledger, the rows and the watermark must agree (a window is committed whole or not at
// all, the watermark never passes an unwritten window), and a re-run of the same backfill must
// reach the sandbox ground truth exactly.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cliEnv, spawnCli, waitUntil } from "../support/child-sync.ts";
import {
  advisoryLocksHeld,
  DAY,
  dbCountsByKey,
  type EngineHarness,
  ledgerRows,
  ledgerViolations,
  mapDiff,
  startEngineHarness,
  truthCountsByKey,
  watermarkRows,
} from "../support/engine-harness.ts";

const CAP = 300;
// Each day's burst cube holds 400 distinct keys per type: above the cap even at 5 minutes.
const BURST = 400;
const NOW = Date.UTC(2026, 0, 10);
const FROM = Date.UTC(2026, 0, 6);
const TO = FROM + 2 * DAY;
const STREAMS = [
  "stat.transaction",
  "stat.sql",
  "stat.httpc",
  "stat.error",
  "stat.remote",
  "range.exception",
  "range.httpc",
  "range.sql",
  "range.remote",
  "range.transaction",
];
// Sandbox requests after which the child is killed: early (few windows committed), middle, late.
// A full run takes about 1,250 requests.
const KILL_AFTER = [40, 450, 950];

let h: EngineHarness;
let env: Record<string, string>;
const args = ["backfill", "--from", new Date(FROM).toISOString(), "--to", new Date(TO).toISOString(), "--streams", STREAMS.join(",")];

beforeAll(async () => {
  h = await startEngineHarness({ now: NOW, maxRecords: CAP, burstKeys: BURST, projects: 1 });
  // APM_START = FROM: the backfill's windows are the stream's first ones, so the watermark moves.
  env = cliEnv({ baseUrl: h.sandbox.url, databaseUrl: h.db.url, projects: h.sandbox.projects, extra: { APM_START: args[2]! } });
}, 120_000);

afterAll(async () => {
  await h?.close();
});

/** Waits (up to 5 s) until the killed child's sessions are gone, so its locks are released. */
async function locksReleased(): Promise<number> {
  const until = Date.now() + 5000;
  let held = await advisoryLocksHeld(h.sql);
  while (held > 0 && Date.now() < until) {
    await new Promise((r) => setTimeout(r, 50));
    held = await advisoryLocksHeld(h.sql);
  }
  return held;
}

const watermarks = new Map<string, number>();

describe("kill -9 during a backfill, then re-run", () => {
  it.each(KILL_AFTER)("killed after %i requests: the ledger, the rows and the watermark agree", async (k) => {
    const before = h.sandbox.requestLog.length;
    const child = spawnCli(args, env);
    const reached = await waitUntil(child, () => h.sandbox.requestLog.length - before >= k);
    const exit = await child.kill("SIGKILL");
    const ledger = await ledgerRows(h.sql);
    process.stderr.write(
      `engine-crash: killed after ${h.sandbox.requestLog.length - before} requests, ${exit.durationMs} ms; ledger holds ${ledger.length} windows\n`,
    );
    expect({ reached, signal: exit.signal }, exit.stderr.slice(-2000)).toEqual({ reached: "ready", signal: "SIGKILL" });
    // Some windows were committed before the kill (else this point tests nothing).
    expect(ledger.length).toBeGreaterThan(0);
    expect(await locksReleased()).toBe(0);
    expect(await ledgerViolations(h.sql, STREAMS, FROM)).toEqual([]);
    expect(ledger.filter((l) => l.status === "failed")).toEqual([]);
    // Watermarks never move backwards across runs.
    for (const wm of await watermarkRows(h.sql)) {
      const key = `${wm.stream}/${wm.pcode}`;
      expect({ key, watermark: wm.watermark }).toEqual({ key, watermark: Math.max(wm.watermark, watermarks.get(key) ?? 0) });
      watermarks.set(key, wm.watermark);
    }
  });

  it("a re-run of the same backfill completes and reaches the ground truth exactly", async () => {
    const rerun = await spawnCli(args, env).exited;
    process.stderr.write(`engine-crash: re-run to completion took ${rerun.durationMs} ms\n`);
    expect({ code: rerun.code }, rerun.stderr.slice(-3000)).toEqual({ code: 0 });
    expect(await ledgerViolations(h.sql, STREAMS, FROM)).toEqual([]);
    const ledger = await ledgerRows(h.sql);
    const pcode = h.pcodes[0]!;
    for (const opId of STREAMS) {
      const mine = ledger.filter((l) => l.stream === opId && l.pcode === pcode);
      // The ledger tiles the range exactly (no gap, no overlap left by the killed runs).
      let at = FROM;
      for (const l of mine) {
        expect({ opId, start: l.start, failed: l.status === "failed" }).toEqual({ opId, start: at, failed: false });
        at = l.end;
      }
      expect({ opId, end: at }).toEqual({ opId, end: TO });
      const truncated = mine.filter((l) => l.status === "truncated");
      const bursts = [h.truth.burstCube(pcode, FROM)!, h.truth.burstCube(pcode, FROM + DAY)!];
      expect(truncated.map((l) => l.start)).toEqual(expect.arrayContaining(bursts));
      const db = await dbCountsByKey(h.sql, opId, pcode, FROM, TO, truncated);
      const starts = truncated.map((l) => l.start);
      const truth = truthCountsByKey(h.truth, pcode, opId, FROM, TO, starts);
      expect(truth.size).toBeGreaterThan(0);
      expect({ opId, keys: db.size, diff: mapDiff(db, truth) }).toEqual({ opId, keys: truth.size, diff: [] });
    }
    // Every stream's watermark reached the end of the range, and only there.
    const wms = (await watermarkRows(h.sql)).map((w) => `${w.stream} ${new Date(w.watermark).toISOString()}`);
    expect(wms.sort()).toEqual(STREAMS.map((s) => `${s} ${new Date(TO).toISOString()}`).sort());
  });
});
