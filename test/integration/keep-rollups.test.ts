// prune keeps what the statistics' rollups read of the raw months it drops (src/db/rollups/keep.ts):
// the marked buckets are refreshed first (no mark of a dropped month is left), and in the
// transaction that drops a raw month its whole hours are written into the hourly rollup (which
// holds its split leaves' hours already), so that the views show the same rows before and after;
// a day past rollup.daily goes, even when its daily month was gone already (dropped by an earlier
// prune) when the refresh stored it.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureWritePartitions } from "../../src/db/partitions/ensureWritePartitions.ts";
import { pruneWarehouse } from "../../src/warehouse/prune.ts";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";
import { markRollupHours, refresh, rollupDiffs } from "../support/rollup-checks.ts";
import { DAY, HOUR } from "../support/time.ts";

const MARCH_2 = Date.UTC(2026, 2, 2);
const JAN_5 = Date.UTC(2026, 0, 5);
// The statistics keep 30 days at 15 May: April on; March goes.
const NOW = Date.UTC(2026, 4, 15);
const STAT_30D = { stat: 30 * DAY };

let db: TestDatabase;

/**
 * A day of one service as the sync leaves it before the refresh, with no ledger window: a whole
 * hour at 03:00 and the hour 04:00 fetched as two split leaves, its hours marked.
 */
async function openDay(day: number, count: number) {
  await ensureWritePartitions(db.sql, "stat_transaction", [day]);
  const windows = [
    [day + 3 * HOUR, day + 4 * HOUR],
    [day + 4 * HOUR, day + 4.5 * HOUR],
    [day + 4.5 * HOUR, day + 5 * HOUR],
  ];
  for (const [from, to] of windows)
    await db.sql`INSERT INTO stat_transaction (pcode, window_start, window_end, service_hash, service, count, error, time_sum, time_min, time_max)
      VALUES (7, ${new Date(from!)}, ${new Date(to!)}, 11, '/checkout', ${count}, 1, ${count * 10}, 2, 90)`;
  await markRollupHours(db.sql, { table: "stat_transaction", stream: "stat.transaction", pcode: 7, fromMs: day, toMs: day + DAY });
}

const shown = async (day: number) => ({
  daily: await db.sql<{ count: string; windows: string; time_sum: number }[]>`
    SELECT count::text, windows::text, time_sum FROM stat_transaction_daily WHERE pcode = 7 AND bucket_start = ${new Date(day)}`,
  hourly: await db.sql<{ hour: Date; count: string; windows: string }[]>`
    SELECT bucket_start AS hour, count::text, windows::text FROM stat_transaction_hourly
    WHERE pcode = 7 AND bucket_start >= ${new Date(day)} AND bucket_start < ${new Date(day + DAY)} ORDER BY 1`,
});

const count = async (query: string) => (await db.sql.unsafe<{ n: number }[]>(`SELECT count(*)::int AS n FROM ${query}`))[0]!.n;

beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => db?.drop());

describe("prune keeps the statistics' rollups of the raw months it drops", () => {
  // Run first: the rollup check (test/support/rollup-checks.ts) catches an hour shown twice.
  it("an hour held twice is a difference the rollup check reports", async () => {
    const day = Date.UTC(2026, 1, 9);
    await openDay(day, 4);
    expect(await rollupDiffs(db.sql)).toEqual([]);
    await refresh(db.sql);
    expect(await rollupDiffs(db.sql, { table: true })).toEqual([]);
    // A whole hour is read from its raw row: stored in the hourly table as well, the view shows it twice.
    await db.sql`INSERT INTO rollup_stat_transaction_hourly (pcode, bucket_start, service_hash, service, windows, count)
      VALUES (7, ${new Date(day + 3 * HOUR)}, 11, '/checkout', 1, 4)`;
    const diffs = await rollupDiffs(db.sql);
    expect(diffs.filter((d) => d.startsWith("stat_transaction_hourly: repeated"))).toHaveLength(1);
    for (const t of ["stat_transaction", "rollup_stat_transaction_daily", "rollup_stat_transaction_hourly", "rollup_marks"])
      await db.sql.unsafe(`DELETE FROM ${t}`);
  });

  it("the raw month goes; its day is refreshed into the daily rollup, its hours move into the hourly one; the views show the same", async () => {
    await openDay(MARCH_2, 5);
    const before = await shown(MARCH_2);
    expect(before.daily).toEqual([{ count: "15", windows: "3", time_sum: 150 }]);
    expect(before.hourly.map((h) => [h.hour.getTime(), h.count, h.windows])).toEqual([
      [MARCH_2 + 3 * HOUR, "5", "1"],
      [MARCH_2 + 4 * HOUR, "10", "2"],
    ]);
    // Before: nothing is stored; the day's hours are marked, and its view computes them.
    expect(await count("rollup_stat_transaction_hourly")).toBe(0);
    expect(await count("rollup_marks")).toBeGreaterThan(0);

    const pruned = await pruneWarehouse(db.sql, STAT_30D, { now: NOW, dryRun: false });
    expect(pruned.find((t) => t.table === "stat_transaction")!.partitions.map((p) => p.name)).toContain("stat_transaction_p2026_03");
    expect(await count("stat_transaction")).toBe(0);
    expect(await count("rollup_stat_transaction_hourly")).toBe(2);
    expect(await count("rollup_stat_transaction_daily")).toBe(1);
    expect(await count("rollup_marks")).toBe(0);
    expect(await shown(MARCH_2)).toEqual(before);
  });

  it("a marked day past rollup.daily goes, though its daily month was dropped before the refresh stored it", async () => {
    await openDay(JAN_5, 3);
    await db.sql.unsafe(`DROP TABLE rollup_stat_transaction_daily_p2026_01`);
    await pruneWarehouse(db.sql, { ...STAT_30D, "rollup.daily": 60 * DAY }, { now: NOW, dryRun: false });
    expect(await count("rollup_marks")).toBe(0);
    expect((await shown(JAN_5)).daily).toEqual([]);
    expect((await shown(MARCH_2)).daily).toHaveLength(1);
  });
});
