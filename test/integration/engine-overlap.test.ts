// Overlap (issue 4): two `sync` processes of the real CLI, started together on the same project
// and database, never write the same stream at once (per-(stream, pcode) advisory lock: the
// second one skips a locked stream), and together leave exactly the ground truth.
// Each process talks to its OWN sandbox (same seed, same clock: identical data), so the two
// request logs say which process fetched which stream when; a process fetches a stream only
// while holding its lock, so for every stream the two processes' request spans must not overlap.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RequestLogEntry, type Sandbox, startSandbox } from "../../src/sandbox/index.ts";
import { type ChildExit, cliEnv, spawnCli } from "../support/child-sync.ts";
import {
  COUNTED_STREAMS,
  compareWithTruth,
  type EngineHarness,
  HOUR,
  ledgerRows,
  ledgerViolations,
  startEngineHarness,
} from "../support/engine-harness.ts";

const CAP = 300;
const BURST = 400;
const STREAMS = COUNTED_STREAMS;
// `sync` runs on the wall clock (the CLI's own): the sandboxes' clock is the test's start, a
// little ahead of the engine's horizon (now - 10 min settle) for the few seconds of the test.
const T0 = Math.floor(Date.now() / 60_000) * 60_000;
const START = Math.floor((T0 - 24 * HOUR) / HOUR) * HOUR;

let h: EngineHarness;
let twin: Sandbox;
let exits: ChildExit[];

beforeAll(async () => {
  h = await startEngineHarness({ now: T0, maxRecords: CAP, burstKeys: BURST, projects: 1 });
  twin = await startSandbox({ now: h.now, seed: 1, projects: 1, maxRecords: CAP, burstKeys: BURST });
  const env = (sandbox: Sandbox) =>
    cliEnv({
      baseUrl: sandbox.url,
      databaseUrl: h.db.url,
      projects: sandbox.projects,
      extra: { APM_START: new Date(START).toISOString() },
    });
  const args = ["sync", "--streams", STREAMS.join(",")];
  const runs = [spawnCli(args, env(h.sandbox)), spawnCli(args, env(twin))];
  exits = await Promise.all(runs.map((r) => r.exited));
  process.stderr.write(`engine-overlap: two concurrent syncs took ${exits.map((e) => e.durationMs).join(" and ")} ms\n`);
}, 180_000);

afterAll(async () => {
  await twin?.stop();
  await h?.close();
});

/** [first, last] time of the requests of one stream in one sandbox's log; null when none. */
function span(log: readonly RequestLogEntry[], opId: string): [number, number] | null {
  const times = log.filter((e) => e.opId === opId).map((e) => e.at);
  return times.length === 0 ? null : [Math.min(...times), Math.max(...times)];
}

describe("two concurrent syncs of the same project", () => {
  it("both succeed, both worked, and at least one stream was found locked", () => {
    for (const e of exits) expect({ code: e.code }, e.stderr.slice(-3000)).toEqual({ code: 0 });
    expect(h.sandbox.requestLog.length).toBeGreaterThan(0);
    expect(twin.requestLog.length).toBeGreaterThan(0);
    const skips = exits.flatMap((e) => e.stderr.split("\n").filter((l) => l.includes("another run is writing this stream now")));
    process.stderr.write(`engine-overlap: ${skips.length} stream(s) skipped as locked\n`);
    expect(skips.length).toBeGreaterThan(0);
  });

  it("never fetched (so never wrote) the same stream in both processes at once", () => {
    const who: string[] = [];
    for (const opId of STREAMS) {
      const a = span(h.sandbox.requestLog, opId);
      const b = span(twin.requestLog, opId);
      expect(a !== null || b !== null).toBe(true);
      who.push(`${opId}: ${!a ? "B" : !b ? "A" : a[0] < b[0] ? "A then B" : "B then A"}`);
      if (!a || !b) continue;
      const disjoint = a[1] < b[0] || b[1] < a[0];
      expect({ opId, a, b, disjoint }).toEqual({ opId, a, b, disjoint: true });
    }
    process.stderr.write(`engine-overlap: writers ${who.join(", ")}\n`);
  });

  it("together they leave the ground truth: no gap, no duplicate, no failure", async () => {
    expect(await ledgerRows(h.sql, { status: "failed" })).toEqual([]);
    expect(await ledgerViolations(h.sql, STREAMS, START)).toEqual([]);
    const pcode = h.pcodes[0]!;
    for (const opId of STREAMS) {
      const mine = (await ledgerRows(h.sql, { stream: opId })).filter((l) => l.pcode === pcode);
      let at = START;
      for (const l of mine) {
        expect({ opId, start: l.start }).toEqual({ opId, start: at });
        at = l.end;
      }
      // Both processes planned up to their horizon (now - 10 min settle).
      expect(at).toBeGreaterThan(T0 - 20 * 60_000);
      const { diff, truthKeys } = await compareWithTruth(h, opId, pcode, START, at);
      expect(truthKeys).toBeGreaterThan(0);
      expect({ opId, diff }).toEqual({ opId, diff: [] });
    }
    const runs = await h.sql<{ status: string }[]>`SELECT status FROM sync_runs ORDER BY id`;
    expect(runs.map((r) => r.status)).toEqual(["ok", "ok"]);
  });
});
