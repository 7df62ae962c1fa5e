// prune keeps what the statistics' rollups read of the raw months it drops (src/db/keepRollups.ts):
// in the transaction that drops a raw month, its whole hours are written into the hourly rollup
// (which holds its split leaves' hours already) and its open days into the daily rollup, so that
// the views show the same rows before and after; an open day past rollup.daily is dropped, even
// when its daily month is gone already (a daily month dropped by an earlier prune).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureWritePartitions } from "../../src/db/ensureWritePartitions.ts";
import { refreshRollups } from "../../src/db/refreshRollups.ts";
import { pruneWarehouse } from "../../src/warehouse/prune.ts";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";
import { rollupDiffs } from "../support/rollup-checks.ts";
import { DAY, HOUR } from "../support/time.ts";

const MARCH_2 = Date.UTC(2026, 2, 2);
const JAN_5 = Date.UTC(2026, 0, 5);
// The statistics keep 30 days at 15 May: April on; March goes.
const NOW = Date.UTC(2026, 4, 15);
const STAT_30D = { stat: 30 * DAY };

let db: TestDatabase;

/**
 * A day of one service as the sync leaves it, with no ledger window (so the day is open): a whole
 * hour at 03:00 and the hour 04:00 fetched as two split leaves, then the rollups brought up to date.
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
  const change = { table: "stat_transaction", pcode: 7, scope: {}, stream: "stat.transaction", fromMs: day, toMs: day + DAY };
  await db.sql.begin((tx) => refreshRollups(tx, change));
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
  // Run first: the rollup check (test/support/rollup-checks.ts) catches a day both stored and open.
  it("a day held twice, stored and open, is a difference the rollup check reports", async () => {
    await openDay(Date.UTC(2026, 1, 9), 4);
    expect(await rollupDiffs(db.sql)).toEqual([]);
    await db.sql`INSERT INTO rollup_stat_transaction_daily (pcode, bucket_start, service_hash, service, windows, count)
      VALUES (7, ${new Date(Date.UTC(2026, 1, 9))}, 11, '/checkout', 3, 12)`;
    const diffs = await rollupDiffs(db.sql);
    expect(diffs.filter((d) => d.startsWith("rollup_stat_transaction_daily: repeated"))).toHaveLength(1);
    for (const t of ["stat_transaction", "rollup_stat_transaction_daily", "rollup_stat_transaction_hourly", "rollup_open_days"])
      await db.sql.unsafe(`DELETE FROM ${t}`);
  });

  it("the raw month goes; its hours move into the hourly rollup and its open day into the daily one; the views show the same", async () => {
    await openDay(MARCH_2, 5);
    const before = await shown(MARCH_2);
    expect(before.daily).toEqual([{ count: "15", windows: "3", time_sum: 150 }]);
    expect(before.hourly.map((h) => [h.hour.getTime(), h.count, h.windows])).toEqual([
      [MARCH_2 + 3 * HOUR, "5", "1"],
      [MARCH_2 + 4 * HOUR, "10", "2"],
    ]);
    // Before: the table holds the split hour only, the day is open.
    expect(await count("rollup_stat_transaction_hourly")).toBe(1);
    expect(await count("rollup_open_days")).toBe(1);

    const pruned = await pruneWarehouse(db.sql, STAT_30D, { now: NOW, dryRun: false });
    expect(pruned.find((t) => t.table === "stat_transaction")!.partitions.map((p) => p.name)).toContain("stat_transaction_p2026_03");
    expect(await count("stat_transaction")).toBe(0);
    expect(await count("rollup_stat_transaction_hourly")).toBe(2);
    expect(await count("rollup_open_days")).toBe(0);
    expect(await shown(MARCH_2)).toEqual(before);
  });

  it("an open day past rollup.daily is dropped, not written into a daily month that is gone", async () => {
    await openDay(JAN_5, 3);
    await db.sql.unsafe(`DROP TABLE rollup_stat_transaction_daily_p2026_01`);
    await pruneWarehouse(db.sql, { ...STAT_30D, "rollup.daily": 60 * DAY }, { now: NOW, dryRun: false });
    expect(await count("rollup_open_days")).toBe(0);
    expect((await shown(JAN_5)).daily).toEqual([]);
    expect((await shown(MARCH_2)).daily).toHaveLength(1);
  });
});
