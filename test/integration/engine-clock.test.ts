// The server clamps etime to its own clock. A server whose clock lags ours must not make every
// run fail or, worse, record short answers as complete: incremental runs plan up to the server's
// now - settle, a window still answered short is left for the next run, and once the clock is
// right the next sync lands the ground truth.
import type { ServerResponse } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { alignDown } from "../../src/windows/grid.ts";
import {
  compareWithTruth,
  type EngineHarness,
  HOUR,
  ledgerRows,
  MINUTE,
  runEngine,
  startEngineHarness,
} from "../support/engine-harness.ts";
import { type RecordedRequest, reply } from "../support/http-server.ts";
import { useServerAndDatabase } from "../support/server-and-db.ts";

const NOW = Date.UTC(2026, 3, 7, 15, 2);
const START = NOW - 6 * HOUR;
const LAG = -3 * HOUR;
const STREAMS = ["stat.transaction", "stat.sql", "range.sql", "range.exception"];

describe("a server whose clock lags ours by 3 h", () => {
  let h: EngineHarness;
  beforeAll(async () => {
    h = await startEngineHarness({
      now: NOW,
      burstKeys: 0,
      projects: 1,
      profile: { clockOffsetMs: LAG },
      env: { APM_START: new Date(START).toISOString() },
    });
  });
  afterAll(() => h?.close());

  it("syncs up to the server's now - settle, exits 0 and says why once", async () => {
    const result = await h.run({ command: "sync", mode: { kind: "sync" }, streams: STREAMS });
    expect(result.exitCode, h.logs.join("\n")).toBe(0);
    const ledger = await ledgerRows(h.sql);
    expect(ledger.filter((l) => l.status !== "done")).toEqual([]);
    const serverHorizon = alignDown(NOW + LAG - 10 * MINUTE, 5 * MINUTE);
    expect(Math.max(...ledger.map((l) => l.end))).toBe(serverHorizon);
    expect(h.logs.filter((l) => l.includes("3 h 0 min behind ours"))).toHaveLength(1);
  });

  it("after the clock is corrected, the next sync lands the ground truth of the whole period", async () => {
    h.sandbox.setProfile({ clockOffsetMs: 0 });
    const result = await h.run({ command: "sync", mode: { kind: "sync" }, streams: STREAMS });
    expect(result.exitCode).toBe(0);
    const horizon = alignDown(NOW - 10 * MINUTE, 5 * MINUTE);
    const ledger = await ledgerRows(h.sql);
    expect(Math.max(...ledger.map((l) => l.end))).toBe(horizon);
    for (const op of STREAMS) {
      const { diff, truthKeys } = await compareWithTruth(h, op, h.pcodes[0]!, alignDown(START, HOUR), horizon);
      expect(diff, op).toEqual([]);
      expect(truthKeys).toBeGreaterThan(0);
    }
  });
});

describe("a window the server still answers short", () => {
  const PCODE = 55;
  // The server's clock in the answers is ours, but it serves nothing past CLAMP (a stale replica).
  const CLAMP = NOW - 90 * MINUTE;
  const answer = (req: RecordedRequest, res: ServerResponse) => {
    const body = JSON.parse(req.body || "{}") as { stime: number; etime: number };
    const etime = Math.max(body.stime, Math.min(body.etime, CLAMP));
    const data = [{ serviceHash: 7, service: "/x", count: 1, error: 0, timeSum: 1, timeMin: 1, timeMax: 1, timeAvg: 1 }];
    reply(res, 200, JSON.stringify({ stime: body.stime, etime, timestamp: NOW, data, total: 1, retrievedTotal: 1 }));
  };
  const sd = useServerAndDatabase(answer);

  it("is not a failure and only what it covers is recorded: exit 0, the echo named once, the next run fetches the rest", async () => {
    const { server, db } = sd;
    const logs: string[] = [];
    const opts = { baseUrl: server.url, projects: [{ pcode: PCODE, token: "clock-token-1" }], database: db, logs };
    const run = (now: number) =>
      runEngine(
        { ...opts, now: () => now, env: { APM_START: new Date(START).toISOString() } },
        { command: "sync", mode: { kind: "sync" }, streams: ["stat.transaction"] },
      );
    const first = await run(NOW);
    expect(first.exitCode).toBe(0);
    expect(first.streams.get("stat.transaction")!.deferred).toBeGreaterThan(0);
    const ledger = await ledgerRows(db.sql);
    expect(ledger.every((l) => l.status === "done" && l.end <= CLAMP)).toBe(true);
    // The window the clamp falls in keeps its covered part, on the 5-minute grid.
    expect(Math.max(...ledger.map((l) => l.end))).toBe(alignDown(CLAMP, 5 * MINUTE));
    const named = logs.filter((l) => l.includes("answered for less ("));
    expect(named).toHaveLength(1);
    // Windows finish in any order: the first one named says what was asked and what was answered.
    expect(named[0]).toMatch(
      /window (\S+)\.\.(\S+) answered for less \(asked \1\.\.\2, answered \1\.\.2026-04-07T1[34]:\d\d:00\.000Z\); (recorded \1\.\.\S+|nothing recorded), the rest is left for the next run( |$)/,
    );
    // The server's clock is ours: the summary does not blame it.
    const summary = logs.filter((l) => l.includes("were answered for less than was asked"));
    expect(summary).toHaveLength(1);
    expect(summary[0]).not.toMatch(/clock/);
    const asked = server.requests.length;
    // The next run asks again for what was left (and the server still answers short: still deferred).
    const second = await run(NOW);
    expect(second.exitCode).toBe(0);
    const posts = server.requests.slice(asked).filter((r) => r.method === "POST");
    const again = posts.map((r) => (JSON.parse(r.body) as { etime: number }).etime);
    expect(again.some((e) => e > CLAMP)).toBe(true);
  });
});

describe("a server whose clock has not reached the windows asked for (etime clamped below stime)", () => {
  const PCODE = 56;
  // Its clock is 3 h behind ours; it sends no Date header, so the run plans on our clock and
  // learns the server's from the answers' `timestamp` (the windows past it are asked for).
  const SERVER_NOW = NOW + LAG;
  let lying = false;
  const answer = (req: RecordedRequest, res: ServerResponse) => {
    res.sendDate = false;
    const body = JSON.parse(req.body || "{}") as { stime: number; etime: number };
    // As the spec's rule 2 says: etime clamped to the server's clock, whatever stime is.
    const etime = lying ? body.etime - HOUR : Math.min(body.etime, SERVER_NOW);
    const stime = lying ? body.stime - HOUR : body.stime;
    const data =
      etime > stime ? [{ serviceHash: 7, service: "/x", count: 1, error: 0, timeSum: 1, timeMin: 1, timeMax: 1, timeAvg: 1 }] : [];
    reply(res, 200, JSON.stringify({ stime, etime, timestamp: SERVER_NOW, data, total: data.length, retrievedTotal: data.length }));
  };
  const sd = useServerAndDatabase(answer);
  const run = (logs: string[]) =>
    runEngine(
      {
        baseUrl: sd.server.url,
        projects: [{ pcode: PCODE, token: "clock-token-2" }],
        database: sd.db,
        logs,
        now: () => NOW,
        env: { APM_START: new Date(START).toISOString() },
      },
      { command: "sync", mode: { kind: "sync" }, streams: ["stat.transaction"] },
    );

  it("defers them, exit 0, one line naming the server's clock; nothing past its clock is recorded", async () => {
    const logs: string[] = [];
    const result = await run(logs);
    expect(result.exitCode, logs.join("\n")).toBe(0);
    expect(result.streams.get("stat.transaction")!.deferred).toBeGreaterThan(0);
    const ledger = await ledgerRows(sd.db.sql);
    expect(ledger.filter((l) => l.status !== "done")).toEqual([]);
    expect(Math.max(...ledger.map((l) => l.end))).toBeLessThanOrEqual(SERVER_NOW);
    expect(logs.filter((l) => l.includes("ends before it starts"))).toEqual([]);
    const summary = logs.filter((l) => l.includes("were answered for less than was asked"));
    expect(summary).toHaveLength(1);
    expect(summary[0]).toContain("the server's clock is 3 h 0 min behind ours");
  });

  it("an answer for another range than asked still fails its window", async () => {
    lying = true;
    try {
      const logs: string[] = [];
      const result = await run(logs);
      expect(result.exitCode).toBe(1);
      expect(logs.join("\n")).toMatch(/the answer starts before the window asked for/);
    } finally {
      lying = false;
    }
  });
});
