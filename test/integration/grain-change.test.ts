// A grain change never double counts (issue 38.3, 38.5): hours synced at the default grain, then
// fetched again at 30 minutes, then at 2 hours. Each refetch replaces every stored row and ledger
// window it overlaps, whatever grain they were fetched at: the sums equal the sandbox's truth, no
// two done windows overlap, and an honest server's answers split differently record no restatement.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSandbox } from "../../src/sandbox/index.ts";
import {
  compareWithTruth,
  DAY,
  type EngineHarness,
  HOUR,
  ledgerViolations,
  runEngine,
  startEngineHarness,
} from "../support/engine-harness.ts";

const DAY0 = Date.UTC(2026, 0, 6);
const FROM = DAY0 + 2 * HOUR;
const TO = DAY0 + 8 * HOUR;
const STREAMS = ["stat.transaction", "stat.sql", "range.transaction"];

let h: EngineHarness;

const SERVER = { seed: 1, projects: 2, burstKeys: 200 } as const;

beforeAll(async () => {
  h = await startEngineHarness({ now: DAY0 + DAY, maxRecords: 300, ...SERVER, env: { APM_START: new Date(DAY0).toISOString() } });
}, 60_000);

afterAll(async () => {
  await h?.close();
});

const refetch = (grain: string) =>
  h.run(
    { command: "backfill", mode: { kind: "backfill", from: FROM, to: TO, onlyMissing: false }, streams: STREAMS },
    { APM_GRAIN: grain },
  );

async function expectExact(label: string): Promise<void> {
  for (const pcode of h.pcodes)
    for (const opId of STREAMS) {
      const c = await compareWithTruth(h, opId, pcode, FROM, TO);
      expect({ label, opId, pcode, diff: c.diff }).toEqual({ label, opId, pcode, diff: [] });
      expect(c.truthKeys).toBeGreaterThan(0);
    }
  const overlapping = await h.sql<{ stream: string; a: Date; b: Date }[]>`
    SELECT x.stream, x.window_start AS a, y.window_start AS b FROM sync_windows x JOIN sync_windows y
      ON x.stream = y.stream AND x.pcode = y.pcode AND x.partition = y.partition AND x.id < y.id
     AND x.window_start < y.window_end AND y.window_start < x.window_end
     WHERE x.status IN ('done', 'truncated') AND y.status IN ('done', 'truncated')`;
  expect({ label, overlapping }).toEqual({ label, overlapping: [] });
  expect(await ledgerViolations(h.sql, STREAMS, FROM)).toEqual([]);
}

describe("a refetch at another grain", () => {
  it("at 30 minutes, then at 2 hours, leaves the truth's sums, no overlapping windows and no restatement", async () => {
    const first = await h.run({
      command: "backfill",
      mode: { kind: "backfill", from: FROM, to: TO, onlyMissing: false },
      streams: STREAMS,
    });
    expect(first.exitCode).toBe(0);
    await expectExact("hours");

    expect((await refetch("30m")).exitCode).toBe(0);
    await expectExact("30 minutes");
    const halves = await h.sql<{ n: number }[]>`
      SELECT count(*)::int AS n FROM sync_windows WHERE stream = 'stat.transaction' AND window_end - window_start = interval '30 minutes'`;
    expect(halves[0]!.n).toBe(2 * 12);

    expect((await refetch("2h")).exitCode).toBe(0);
    await expectExact("2 hours");
    const restated = await h.sql`SELECT stream, window_start, rows_before, rows_after, measure_before, measure_after FROM restatements`;
    expect(restated).toEqual([]);
  });
});

describe("a window fetched again in other pieces", () => {
  // The same server (seed) with a record cap of 40: the hours stored whole come back split.
  async function refetchSplit(restate: boolean) {
    const capped = await startSandbox({ now: h.now, maxRecords: 40, ...SERVER });
    if (restate) capped.setHostile({ modes: ["restate"], ops: ["stat.transaction"] });
    try {
      const opts = {
        baseUrl: capped.url,
        projects: capped.projects,
        database: h.db,
        now: h.now,
        env: { APM_START: new Date(DAY0).toISOString() },
      };
      const req = {
        command: "backfill",
        mode: { kind: "backfill", from: FROM, to: FROM + 2 * HOUR, onlyMissing: false },
        streams: ["stat.transaction"],
      } as const;
      return await runEngine(opts, req);
    } finally {
      await capped.stop();
    }
  }
  const restatements = () => h.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM restatements WHERE stream = 'stat.transaction'`;

  it("records no restatement when the answer is the same, one when the server revised it", async () => {
    const hours = { command: "backfill", mode: { kind: "backfill", from: FROM, to: FROM + 2 * HOUR, onlyMissing: false } } as const;
    expect((await h.run({ ...hours, streams: ["stat.transaction"] })).exitCode).toBe(0);
    const before = (await restatements())[0]!.n;
    const split = await refetchSplit(false);
    expect(split.exitCode).toBe(0);
    expect(split.streams.get("stat.transaction")!.splits).toBeGreaterThan(0);
    await expectExact("split by a lower record cap");
    expect((await restatements())[0]!.n).toBe(before);

    // Revised (count + 1 on a record of each answer): the measure over the window tells, split or not.
    expect((await refetchSplit(true)).exitCode).toBe(0);
    expect((await restatements())[0]!.n).toBeGreaterThan(before);
  });
});
