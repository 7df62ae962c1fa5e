// On a server database the rollups are refreshed along a backfill's fetch (engine/refresh-rollups.ts
// RefreshAlong): the days every target writing a rollup's table has gone past are refreshed while
// later windows are still fetched, so that the refresh at the run's end is left the last days only.
// The marks keep it exact either way (test/support/rollup-checks.ts: the tables against a GROUP BY
// of the raw rows); the refresher leaves the days not settled yet, project by project, marked.
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { JobRequest } from "../../src/engine/types.ts";
import { DAY, type EngineHarness, HOUR, startEngineHarness } from "../support/engine-harness.ts";
import { markRollupHours, refresh, rollupDiffs } from "../support/rollup-checks.ts";

const DAYS = 4;
const FROM = Date.UTC(2026, 3, 10);
const TO = FROM + DAYS * DAY;
const iso = (ms: number) => new Date(ms).toISOString();
const STREAM = "stat.transaction";
/** Hourly windows of both projects. */
const WINDOWS = DAYS * 24 * 2;
const backfill = { command: "backfill", mode: { kind: "backfill", from: FROM, to: TO }, streams: [STREAM] } as const;

let h: EngineHarness;

const count = async (query: Promise<{ n: number }[]>) => (await query)[0]!.n;
const marks = () => count(h.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM rollup_marks`);
const refreshedDays = () => count(h.sql<{ n: number }[]>`SELECT count(DISTINCT bucket_start)::int AS n FROM rollup_stat_transaction_daily`);
/** Days in `stream`'s daily table while the fetch has windows left to write (0 once every window is written). */
const refreshedWhileFetching = (stream = STREAM) =>
  count(h.sql<{ n: number }[]>`
    SELECT CASE WHEN (SELECT count(*) FROM sync_windows WHERE stream = ${stream}) < ${WINDOWS}
      THEN (SELECT count(DISTINCT bucket_start) FROM ${h.sql(`rollup_${stream.replace(".", "_")}_daily`)}) ELSE 0 END::int AS n`);

/** Runs `req` and returns the most days `stream`'s daily table held while windows were left to write. */
async function daysWhileFetching(req: JobRequest, stream = STREAM, env?: Record<string, string>): Promise<number> {
  let finished = false;
  const run = h.run(req, env).finally(() => {
    finished = true;
  });
  let during = 0;
  while (!finished) {
    during = Math.max(during, await refreshedWhileFetching(stream));
    await sleep(100);
  }
  expect((await run).exitCode).toBe(0);
  return during;
}

beforeAll(async () => {
  // Answers of about 100 ms, two windows at a time: each project's four days take a few seconds,
  // several ticks of the refresh along (one a second here).
  h = await startEngineHarness({
    now: TO + HOUR,
    burstKeys: 0,
    projects: 2,
    latencyMs: [90, 110],
    env: { APM_START: iso(FROM), APM_WINDOW_CONCURRENCY: "2", APM_REFRESH_ALONG: "1s" },
  });
}, 120_000);
afterAll(async () => h?.close());

describe("the rollups' refresh along the fetch", () => {
  it("stores settled days while the backfill still fetches, and ends exact with no mark left", async () => {
    expect(await daysWhileFetching(backfill)).toBeGreaterThan(0);
    expect(await refreshedDays()).toBe(DAYS);
    expect(await marks()).toBe(0);
    expect(await rollupDiffs(h.sql, { table: true })).toEqual([]);
  }, 120_000);

  it("starts a pass as soon as a day has settled, not a pause after the run's start", async () => {
    // A pass at most every 10 minutes: the first comes when the first day settles, seconds in.
    const sql = { ...backfill, streams: ["stat.sql"] };
    expect(await daysWhileFetching(sql, "stat.sql", { APM_REFRESH_ALONG: "10m" })).toBeGreaterThan(0);
    expect(await rollupDiffs(h.sql, { table: true })).toEqual([]);
  }, 120_000);

  it("refreshes only the days each project has settled, and leaves the others marked", async () => {
    const [first, second] = h.pcodes as [number, number];
    for (const pcode of h.pcodes)
      await markRollupHours(h.sql, { table: "stat_transaction", stream: STREAM, pcode, fromMs: FROM, toMs: FROM + 3 * DAY });
    const settledBefore = (source: string, pcode: string) =>
      source === "stat_transaction" && pcode === String(first) ? FROM + 2 * DAY + HOUR : Number.NEGATIVE_INFINITY;
    const r = await refresh(h.sql, { settledBefore });
    expect(r.days).toBe(2);
    expect(r.hours.stat_transaction).toBe(2 * 24);
    const left = await h.sql<
      { pcode: string; n: number }[]
    >`SELECT pcode::text, count(*)::int AS n FROM rollup_marks GROUP BY 1 ORDER BY 1`;
    expect(left).toEqual(
      [
        { pcode: String(first), n: 24 },
        { pcode: String(second), n: 3 * 24 },
      ].sort((a, b) => a.pcode.localeCompare(b.pcode)),
    );
    // Without a frontier the rest is refreshed, exactly.
    expect((await refresh(h.sql)).days).toBe(3);
    expect(await marks()).toBe(0);
    expect(await rollupDiffs(h.sql, { table: true })).toEqual([]);
  }, 60_000);
});
