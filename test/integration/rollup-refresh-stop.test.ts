// The rollups' refresh after a backfill is shown and stoppable (issue 38 point 2): it refreshes a
// day at a time, says so in the progress ("refreshing rollups: N/M days"), stops between days at a
// signal (the marks of the days it did not refresh stay, the views stay exact) and, once the
// shutdown grace is over, cancels the day in flight (rolled back, its marks kept): the CLI exits
// 143 within the grace whatever the refresh had left. The next run refreshes the rest exactly
// (test/support/rollup-checks.ts: the views and tables against a GROUP BY of the raw rows).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase } from "../../src/db/driver/connect.ts";
import type { ProgressSink } from "../../src/engine/progress.ts";
import { cliEnv, runCli, spawnCli, waitUntil } from "../support/child-sync.ts";
import { DAY, type EngineHarness, HOUR, startEngineHarness } from "../support/engine-harness.ts";
import { markRollupHours, refresh, rollupDiffs } from "../support/rollup-checks.ts";

// Three days of April and three of May: two partitions of the raw table.
const DAYS = 6;
const FROM = Date.UTC(2026, 3, 28);
const TO = FROM + DAYS * DAY;
const MAY = Date.UTC(2026, 4, 1);
const iso = (ms: number) => new Date(ms).toISOString();
const STREAM = "stat.transaction";
const backfill = { command: "backfill", mode: { kind: "backfill", from: FROM, to: TO }, streams: [STREAM] } as const;
const ARGS = ["backfill", "--from", iso(FROM), "--to", iso(TO), "--streams", STREAM];
/** One mark per fetched window: an hour of each project. */
const ALL_MARKS = DAYS * 24 * 2;

let h: EngineHarness;
let env: Record<string, string>;

const marks = async () => (await h.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM rollup_marks`)[0]!.n;

/** Sums of the daily table and of the raw rows, per day: equal where the refresh stored the day. */
const dailySums = () =>
  h.sql<{ day: Date; stored: string; raw: string }[]>`
    SELECT d.day, coalesce((SELECT sum(count) FROM rollup_stat_transaction_daily r WHERE r.bucket_start = d.day), 0)::text AS stored,
      (SELECT sum(count) FROM stat_transaction s WHERE s.window_start >= d.day AND s.window_start < d.day + interval '1 day')::text AS raw
    FROM generate_series(${new Date(FROM)}::timestamptz, ${new Date(TO - DAY)}::timestamptz, interval '1 day') AS d(day) ORDER BY 1`;

/** A trigger that holds each statement writing coverage rows (the refresh writes them for every day) for `seconds`. */
const slowRefresh = (seconds: number) =>
  h.sql.unsafe(`
    CREATE OR REPLACE FUNCTION slow_refresh() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_sleep(${seconds}); RETURN NULL; END $$;
    CREATE OR REPLACE TRIGGER slow_refresh AFTER INSERT ON rollup_coverage FOR EACH STATEMENT EXECUTE FUNCTION slow_refresh()`);

beforeAll(async () => {
  // The refresh at the run's end is what these tests look at: none along the fetch (APM_REFRESH_ALONG).
  h = await startEngineHarness({ now: TO + HOUR, burstKeys: 0, projects: 2, env: { APM_START: iso(FROM), APM_REFRESH_ALONG: "0" } });
  env = { ...cliEnv({ baseUrl: h.sandbox.url, databaseUrl: h.db.url, projects: h.sandbox.projects }), APM_REFRESH_ALONG: "0" };
  const run = await h.run(backfill);
  expect(run.exitCode).toBe(0);
}, 120_000);
afterAll(async () => h?.close());

describe("the rollups' refresh, a day at a time", () => {
  it("reads a marked day's raw rows from its own month's partition only, not every raw row", async () => {
    // On one connection of its own, whose table statistics (rows read) are flushed on demand.
    const one = await openDatabase({ databaseUrl: h.db.url, dataDir: "", dbSchema: h.db.schema }, undefined, { max: 1 });
    const rowsRead = async () => {
      await one.sql`SELECT pg_stat_force_next_flush()`;
      await one.sql`SELECT pg_stat_clear_snapshot()`;
      const [row] = await one.sql<{ n: number }[]>`
        SELECT sum(seq_tup_read + coalesce(idx_tup_fetch, 0))::int AS n FROM pg_stat_user_tables
        WHERE schemaname = current_schema() AND relname LIKE 'stat\_transaction\_p%'`;
      return row!.n;
    };
    try {
      const day = MAY + DAY;
      for (const pcode of h.pcodes)
        await markRollupHours(one.sql, { table: "stat_transaction", stream: STREAM, pcode, fromMs: day, toMs: day + DAY });
      const before = await rowsRead();
      expect((await refresh(one.sql)).hours.stat_transaction).toBe(48);
      const read = (await rowsRead()) - before;
      const [rows] = await one.sql<{ day: number; month: number; all: number }[]>`
        SELECT count(*) FILTER (WHERE window_start >= ${new Date(day)} AND window_start < ${new Date(day + DAY)})::int AS day,
          count(*) FILTER (WHERE window_start >= ${new Date(MAY)})::int AS month, count(*)::int AS all FROM stat_transaction`;
      expect(rows!.month).toBeLessThan(rows!.all);
      expect(read).toBeGreaterThanOrEqual(rows!.day);
      expect(read).toBeLessThanOrEqual(rows!.month);
    } finally {
      await one.close();
    }
    expect(await rollupDiffs(h.sql, { table: true })).toEqual([]);
  });

  it("stops between days at the stop signal: the marks of the days left stay, the views exact; the next refresh does the rest", async () => {
    // Every raw row changed and every hour marked again, as a refetch that found other counts would.
    await h.sql`UPDATE stat_transaction SET count = count + 1`;
    for (const pcode of h.pcodes)
      await markRollupHours(h.sql, { table: "stat_transaction", stream: STREAM, pcode, fromMs: FROM, toMs: TO });
    const stopping = new AbortController();
    const seen: [number, number][] = [];
    const result = await refresh(h.sql, {
      stopping: stopping.signal,
      progress: (done, total) => {
        seen.push([done, total]);
        if (done === 2) stopping.abort();
      },
    });
    expect(result.stopped).toBe(true);
    expect(seen).toEqual([
      [0, DAYS],
      [1, DAYS],
      [2, DAYS],
    ]);
    // The two oldest days refreshed, the others still marked (their tables' rows as before).
    expect(await marks()).toBe((DAYS - 2) * 24 * 2);
    const sums = await dailySums();
    expect(sums.slice(0, 2).every((d) => d.stored === d.raw)).toBe(true);
    expect(sums.slice(2).every((d) => d.stored !== d.raw)).toBe(true);
    expect(await rollupDiffs(h.sql)).toEqual([]);

    const next = await refresh(h.sql);
    expect(next.stopped).toBe(false);
    expect(next.hours.stat_transaction).toBe((DAYS - 2) * 24 * 2);
    expect(await marks()).toBe(0);
    expect(await rollupDiffs(h.sql, { table: true })).toEqual([]);
  });

  it("shows in the progress: days refreshed of days marked, up to all of them", async () => {
    const seen: [number, number][] = [];
    const sink: ProgressSink = {
      planned() {},
      allPlanned() {},
      windowDone() {},
      windowFailed() {},
      refreshing: (done, total) => void seen.push([done, total]),
      stop() {},
    };
    const run = await h.run(backfill, {}, sink);
    expect(run.exitCode).toBe(0);
    expect(seen[0]).toEqual([0, DAYS]);
    expect(seen.at(-1)).toEqual([DAYS, DAYS]);
    expect(seen.map(([done]) => done)).toEqual([...Array(DAYS + 1).keys()]);
    expect(await marks()).toBe(0);
  });

  it("CLI: a SIGTERM during the refresh ends the process within the grace, the days left marked, the progress saying so", async () => {
    await slowRefresh(0.4);
    const child = spawnCli([...ARGS, "--refetch"], env);
    expect(await waitUntil(child, () => child.stderr().includes("refreshing the rollups"))).toBe("ready");
    // A day or two refreshed first: the signal comes between days, not before the first.
    await new Promise((r) => setTimeout(r, 1_200));
    const signalled = performance.now();
    const exit = await child.kill("SIGTERM");
    const seconds = (performance.now() - signalled) / 1000;
    expect(exit.code, exit.stderr.slice(-2000)).toBe(143);
    // The default grace is 10 s; a day's refresh here takes about 0.8 s.
    expect(seconds).toBeLessThan(5);
    const left = await marks();
    expect(left).toBeGreaterThan(0);
    expect(left).toBeLessThan(ALL_MARKS);
    expect(left % 48).toBe(0);
    expect(await rollupDiffs(h.sql)).toEqual([]);
    const last = exit.stderr
      .split("\n")
      .filter((l) => l.includes("progress:"))
      .at(-1);
    expect(last).toMatch(
      new RegExp(`progress: stopped by a signal: .*rollups refreshed ${DAYS - left / 48}/${DAYS} days, the rest next run`),
    );
    expect(exit.stderr).toMatch(/rollups' refresh stopped by a signal/);
  }, 120_000);

  it("CLI: a day still refreshing when the grace is over is cancelled, its marks kept; the next run refreshes everything", async () => {
    await slowRefresh(60);
    const child = spawnCli([...ARGS, "--refetch"], { ...env, APM_SHUTDOWN_GRACE: "1s" });
    const sleeping = async () => {
      const [row] = await h.sql<{ n: number }[]>`
        SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event = 'PgSleep' AND datname = current_database()`;
      return row!.n > 0;
    };
    let inFlight = false;
    const poll = setInterval(() => void sleeping().then((s) => (inFlight ||= s)), 50);
    expect(await waitUntil(child, () => inFlight)).toBe("ready");
    clearInterval(poll);
    // Seen from here, the day in flight has not taken its marks yet (its transaction is open).
    const marked = await marks();
    expect(marked).toBeGreaterThanOrEqual(ALL_MARKS);
    const signalled = performance.now();
    const exit = await child.kill("SIGTERM");
    expect(exit.code, exit.stderr.slice(-2000)).toBe(143);
    expect((performance.now() - signalled) / 1000).toBeLessThan(6);
    expect(await marks()).toBe(marked);
    expect(await rollupDiffs(h.sql)).toEqual([]);

    await h.sql.unsafe("DROP TRIGGER slow_refresh ON rollup_coverage");
    const next = await runCli(ARGS, env);
    expect(next.code, next.stderr.slice(-2000)).toBe(0);
    expect(await marks()).toBe(0);
    expect(await rollupDiffs(h.sql, { table: true })).toEqual([]);
  }, 120_000);
});
