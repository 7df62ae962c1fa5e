// Issue 31 point 4: no silent loss after a killed worker. Three workers share a queued 1-day
// statistics backfill (split windows, burst cubes cut at 5 minutes); workers are killed with -9
// one after another, each replaced by a new one: between the leaves of a split window, inside a
// write transaction, and one inside a write and then the worker that recovered its job inside
// that job's write. The workers left must finish with every stored sum equal to the sandbox truth,
// the ledger's done windows must tile the day and hold exactly the rows they say, and the rollup
// views must sum the raw rows.
// WORKER_KILL_ITERATIONS=n runs n such backfills, the kill points in turn at moments that move
// with the iteration, and prints how many were exact (test/scripts/worker-kill-loop.sh).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type Kill,
  type KillFixture,
  type KillOutcome,
  type KillPoint,
  runKillIteration,
  startKillFixture,
} from "../support/worker-kill.ts";

const POINTS: readonly KillPoint[] = ["split", "write", "recovery", "requests"];
const iterations = Number(process.env.WORKER_KILL_ITERATIONS ?? 1);

/** The kills of iteration `k`: three of the points, from point k on, each at a moment that moves with `k`. */
function killsOf(k: number): Kill[] {
  const nth = (point: KillPoint) =>
    ({ split: 1 + ((k * 5) % 16), write: 1 + ((k * 7) % 12), recovery: 1 + ((k * 3) % 8), requests: 3 + ((k * 13) % 60) })[point];
  return [0, 1, 2].map((i) => POINTS[(k + i) % POINTS.length]!).map((point) => ({ point, nth: nth(point) }));
}

describe("workers killed with -9 lose nothing", () => {
  let fx: KillFixture;
  beforeAll(async () => {
    fx = await startKillFixture();
  });
  afterAll(() => fx?.close());

  it(`${iterations} backfill(s), 3 kills each: the truth exactly, the ledger's done windows hold their rows`, {
    timeout: 150_000 * iterations,
  }, async () => {
    const outcomes: KillOutcome[] = [];
    for (let k = 0; k < iterations; k++) {
      const o = await runKillIteration(fx, killsOf(k), k % 3);
      outcomes.push(o);
      const result = o.problems.length === 0 ? "exact" : `INEXACT\n  ${o.problems.join("\n  ")}`;
      process.stderr.write(
        `backfill ${k + 1}/${iterations}: killed [${o.killed.join("; ")}], ${o.splitRequests} split request(s), ${o.truncated} truncated${o.unreached.length > 0 ? `, not reached (the backfill ended first): ${o.unreached.join(", ")}` : ""}: ${result}\n`,
      );
    }
    const exact = outcomes.filter((o) => o.problems.length === 0).length;
    const kills = outcomes.reduce((n, o) => n + o.killed.reduce((m, k) => m + k.split(" then ").length, 0), 0);
    process.stderr.write(
      `worker kills: ${kills} kill(s) in ${outcomes.length} backfill(s): ${exact} exact, ${outcomes.length - exact} inexact\n`,
    );
    // The first backfill's kill points are the earliest moments of each (#1): every one is reached.
    expect({ unreached: outcomes[0]!.unreached, killed: outcomes[0]!.killed.length }).toEqual({
      unreached: [],
      killed: outcomes[0]!.kills.length,
    });
    for (const o of outcomes) {
      expect({ killed: o.killed, problems: o.problems }).toEqual({ killed: o.killed, problems: [] });
      expect(o.killed.length).toBeGreaterThan(0);
      expect(o.splitRequests).toBeGreaterThan(0);
      expect(o.truncated).toBeGreaterThan(0);
    }
  });
});
