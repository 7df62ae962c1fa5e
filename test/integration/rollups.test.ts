// Rollups kept by the sync (issue 18 item 2): after overlapping backfills, a re-fetch by the
// sync's lookback, splits and windows still truncated at 5 minutes, every hourly and daily rollup
// equals a GROUP BY over its raw rows, and each bucket's coverage is the share of it the ledger
// covers, also after a re-fetch the server answered short. A day is stored once the ledger covers
// all of it, open (computed by its view) until then. The views read the rollups: counts are
// bigint, a partly fetched hour says so.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DAY, type EngineHarness, HOUR, MINUTE, startEngineHarness } from "../support/engine-harness.ts";
import { coverageDiffs, rollupDiffs } from "../support/rollup-checks.ts";

const DAY0 = Date.UTC(2026, 0, 6);
const STATS = ["stat.transaction", "stat.sql", "stat.httpc", "stat.error", "stat.remote"];
const SERIES = ["series.apdex", "series.apdex.avg", "series.thread_count.avg"];
const STREAMS = [...STATS, ...SERIES];

let h: EngineHarness;

beforeAll(async () => {
  // A cap of 300 with 400 burst keys: windows split, and the burst cube stays truncated at 5 minutes.
  h = await startEngineHarness({
    now: DAY0 + 2 * DAY + 2 * HOUR + 17 * MINUTE,
    maxRecords: 300,
    burstKeys: 400,
    projects: 2,
    env: { APM_START: "2d", APM_LOOKBACK: "3h" },
  });
  const backfill = (from: number, to: number) => h.run({ command: "backfill", mode: { kind: "backfill", from, to }, streams: STREAMS });
  expect((await backfill(DAY0, DAY0 + DAY)).exitCode).toBe(0);
  // Overlapping the first, then a refetch of the first one's windows (a backfill replaces them).
  expect((await backfill(DAY0 + 12 * HOUR, DAY0 + 36 * HOUR)).exitCode).toBe(0);
  expect((await backfill(DAY0, DAY0 + 6 * HOUR)).exitCode).toBe(0);
  // The sync re-reads its lookback and stops at now - settle, inside an hour.
  expect((await h.run({ command: "sync", mode: { kind: "sync" }, streams: STREAMS })).exitCode).toBe(0);
}, 300_000);

afterAll(async () => h?.close());

describe("rollups", () => {
  it("the run split windows and left some truncated: the cases are there", async () => {
    const [row] = await h.sql<{ splits: number; truncated: number }[]>`
      SELECT sum(splits)::int AS splits, count(*) FILTER (WHERE status = 'truncated')::int AS truncated FROM sync_windows`;
    expect(row!.splits).toBeGreaterThan(0);
    expect(row!.truncated).toBeGreaterThan(0);
  });

  it("every hourly and daily rollup equals a GROUP BY over its raw rows", async () => {
    const [raw] = await h.sql<{ n: number }[]>`SELECT (SELECT count(*) FROM stat_transaction) + (SELECT count(*) FROM metric_points) AS n`;
    expect(Number(raw!.n)).toBeGreaterThan(1000);
    expect(await rollupDiffs(h.sql)).toEqual([]);
  });

  it("a statistic's hourly table holds only the hours of split windows' leaves: whole hours are read from the raw rows", async () => {
    const [row] = await h.sql<{ leaves: number; kept: number; whole: number }[]>`
      SELECT (SELECT count(*)::int FROM stat_transaction WHERE window_end - window_start < interval '1 hour') AS leaves,
        (SELECT count(*)::int FROM rollup_stat_transaction_hourly) AS kept,
        (SELECT count(*)::int FROM rollup_stat_transaction_hourly r WHERE EXISTS (SELECT 1 FROM stat_transaction s
          WHERE s.pcode = r.pcode AND s.window_start = r.bucket_start AND s.window_end >= r.bucket_start + interval '1 hour')) AS whole`;
    expect(row!.leaves).toBeGreaterThan(0);
    expect(row!.kept).toBeGreaterThan(0);
    expect(row!.whole).toBe(0);
  });

  it("each bucket's coverage is the share of it the ledger covers", async () => {
    expect(await coverageDiffs(h.sql)).toEqual([]);
  });

  it("the views read the rollups: bigint counts, a full hour covered 1, the hour the sync stopped inside less", async () => {
    const types = await h.sql<{ column_name: string; data_type: string }[]>`
      SELECT column_name, data_type FROM information_schema.columns WHERE table_name = 'stat_transaction_hourly' AND column_name IN ('count', 'error', 'windows', 'coverage')`;
    expect(Object.fromEntries(types.map((t) => [t.column_name, t.data_type]))).toEqual({
      count: "bigint",
      error: "bigint",
      windows: "bigint",
      coverage: "double precision",
    });
    const cover = await h.sql<{ bucket: Date; coverage: number }[]>`
      SELECT DISTINCT bucket_start AS bucket, coverage FROM stat_transaction_hourly WHERE pcode = ${h.pcodes[0]!} ORDER BY 1`;
    expect(cover.find((c) => c.bucket.getTime() === DAY0 + 3 * HOUR)?.coverage).toBe(1);
    const last = cover.at(-1)!;
    expect(last.coverage).toBeGreaterThan(0);
    expect(last.coverage).toBeLessThan(1);
  });

  it("a day the ledger covers wholly is a row of the daily rollup; one it does not is open and its view computes it", async () => {
    const days = await h.sql<{ day: Date; coverage: number; open: boolean; stored: number; shown: number; covered: number | null }[]>`
      SELECT v.bucket_start AS day, min(v.coverage) AS coverage,
        EXISTS (SELECT 1 FROM rollup_open_days o WHERE o.source = 'stat_transaction' AND o.pcode = v.pcode AND o.bucket_start = v.bucket_start) AS open,
        (SELECT count(*)::int FROM rollup_stat_transaction_daily d WHERE d.pcode = v.pcode AND d.bucket_start = v.bucket_start) AS stored,
        count(*)::int AS shown,
        (SELECT c.coverage FROM rollup_coverage c WHERE c.stream = 'stat.transaction' AND c.grain = 'daily' AND c.pcode = v.pcode AND c.bucket_start = v.bucket_start) AS covered
      FROM stat_transaction_daily v WHERE v.pcode = ${h.pcodes[0]!} GROUP BY v.pcode, v.bucket_start ORDER BY 1`;
    // DAY0 and the next are fetched whole; the day the sync stopped in is not. A closed day keeps its
    // coverage as a row; an open day's is its hours' (the windows of one day write no row in common).
    expect(days.map((d) => [d.day.getTime(), d.coverage === 1, d.open, d.covered])).toEqual([
      [DAY0, true, false, 1],
      [DAY0 + DAY, true, false, 1],
      [DAY0 + 2 * DAY, false, true, null],
    ]);
    for (const d of days) {
      expect(d.shown).toBeGreaterThan(0);
      expect(d.stored).toBe(d.open ? 0 : d.shown);
    }
    expect(days.at(-1)!.coverage).toBeGreaterThan(0);
  });

  it("a day left open though wholly covered (its last windows were in flight together) is closed by the next run of its stream", async () => {
    const [pcode, day] = [h.pcodes[0]!, new Date(DAY0 + DAY)];
    const state = async () =>
      (
        await h.sql<{ open: number; stored: number; covered: number | null }[]>`
      SELECT (SELECT count(*)::int FROM rollup_open_days WHERE source = 'stat_transaction' AND pcode = ${pcode} AND bucket_start = ${day}) AS open,
        (SELECT count(*)::int FROM rollup_stat_transaction_daily WHERE pcode = ${pcode} AND bucket_start = ${day}) AS stored,
        (SELECT coverage FROM rollup_coverage WHERE stream = 'stat.transaction' AND grain = 'daily' AND pcode = ${pcode} AND bucket_start = ${day}) AS covered`
      )[0]!;
    const stored = (await state()).stored;
    expect(stored).toBeGreaterThan(0);
    await h.sql.begin(async (tx) => {
      await tx`DELETE FROM rollup_stat_transaction_daily WHERE pcode = ${pcode} AND bucket_start = ${day}`;
      await tx`DELETE FROM rollup_coverage WHERE stream = 'stat.transaction' AND grain = 'daily' AND pcode = ${pcode} AND bucket_start = ${day}`;
      await tx`INSERT INTO rollup_open_days (source, pcode, bucket_start) VALUES ('stat_transaction', ${pcode}, ${day})`;
    });
    expect(await rollupDiffs(h.sql)).toEqual([]);
    const from = DAY0 + 2 * DAY;
    const run = await h.run({ command: "backfill", mode: { kind: "backfill", from, to: from + HOUR }, streams: ["stat.transaction"] });
    expect(run.exitCode).toBe(0);
    expect(await state()).toEqual({ open: 0, stored, covered: 1 });
    expect(await rollupDiffs(h.sql)).toEqual([]);
    expect(await coverageDiffs(h.sql)).toEqual([]);
  });

  // Last: it leaves part of DAY0 03:00-05:00 unfetched. A 2-hour window answered for its first
  // half only (a stale replica): the window's rows are replaced, its second hour left for the next
  // run; the rollups and coverage of that hour must follow the rows that are gone.
  it("a re-fetch answered short keeps the rollups and coverage of the unanswered hours equal to the rows", async () => {
    const from = DAY0 + 3 * HOUR;
    h.sandbox.setHostile({ modes: ["echo-short"], ops: ["stat.transaction", "stat.sql"] });
    try {
      const streams = ["stat.transaction", "stat.sql"];
      await h.run({ command: "backfill", mode: { kind: "backfill", from, to: from + 2 * HOUR }, streams }, { APM_GRAIN: "2h" });
    } finally {
      h.sandbox.setHostile(null);
    }
    // The case is there: part of the two hours is left unrecorded, and none of its rows remain.
    const [left] = await h.sql<{ covered: number; rows: number }[]>`
      SELECT (SELECT coalesce(sum(extract(epoch FROM window_end - window_start)), 0)::float8 FROM sync_windows
              WHERE stream = 'stat.transaction' AND pcode = ${h.pcodes[0]!} AND window_start >= ${new Date(from)} AND window_end <= ${new Date(from + 2 * HOUR)}) AS covered,
             (SELECT count(*)::int FROM stat_transaction WHERE pcode = ${h.pcodes[0]!} AND window_start >= ${new Date(from)} AND window_start < ${new Date(from + 2 * HOUR)}) AS rows`;
    expect(left!.covered).toBeLessThan(7200);
    expect(left!.rows).toBeGreaterThan(0);
    expect(await rollupDiffs(h.sql)).toEqual([]);
    expect(await coverageDiffs(h.sql)).toEqual([]);
    // DAY0 is no longer wholly fetched: its rows left the daily rollup, and it is open.
    const [day0] = await h.sql<{ open: number; stored: number }[]>`
      SELECT (SELECT count(*)::int FROM rollup_open_days WHERE source = 'stat_transaction' AND pcode = ${h.pcodes[0]!} AND bucket_start = ${new Date(DAY0)}) AS open,
        (SELECT count(*)::int FROM rollup_stat_transaction_daily WHERE pcode = ${h.pcodes[0]!} AND bucket_start = ${new Date(DAY0)}) AS stored`;
    expect(day0).toEqual({ open: 1, stored: 0 });
  });
});
