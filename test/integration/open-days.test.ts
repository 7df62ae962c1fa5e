// prune settles the open days of the daily rollups (src/db/settleOpenDays.ts) before it drops
// partitions: an open day past rollup.hourly is written into the daily rollup from its hours (the
// view keeps it once they go); one past rollup.daily is dropped, even when its daily month is gone
// already (rollup.daily shorter than rollup.hourly, a daily month dropped by an earlier prune).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureWritePartitions } from "../../src/db/ensureWritePartitions.ts";
import { settleOpenDays } from "../../src/db/settleOpenDays.ts";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";
import { rollupDiffs } from "../support/rollup-checks.ts";
import { HOUR } from "../support/time.ts";

const MARCH_2 = Date.UTC(2026, 2, 2);
const JAN_5 = Date.UTC(2026, 0, 5);
const APRIL = Date.UTC(2026, 3, 1);

let db: TestDatabase;

/** Two hours of one service, as a window's write leaves them in the hourly rollup, and the day marked open. */
async function openDay(day: number, count: number) {
  await ensureWritePartitions(db.sql, "stat_transaction", [day]);
  for (const hour of [day + 3 * HOUR, day + 4 * HOUR])
    await db.sql`INSERT INTO rollup_stat_transaction_hourly (pcode, bucket_start, service_hash, service, windows, count, error, time_sum, time_min, time_max, coverage)
      VALUES (7, ${new Date(hour)}, 11, '/checkout', 1, ${count}, 1, ${count * 10}, 2, 90, 1)`;
  await db.sql`INSERT INTO rollup_open_days (source, pcode, bucket_start) VALUES ('stat_transaction', 7, ${new Date(day)})`;
}

const shown = async (day: number) =>
  db.sql<{ count: string; windows: string; time_sum: number }[]>`
    SELECT count::text, windows::text, time_sum FROM stat_transaction_daily WHERE pcode = 7 AND bucket_start = ${new Date(day)}`;

beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => db?.drop());

describe("settling the open days", () => {
  // Run first: the rollup check (test/support/rollup-checks.ts) catches a day both stored and open.
  it("a day held twice, stored and open, is a difference the rollup check reports", async () => {
    await openDay(Date.UTC(2026, 1, 9), 4);
    await db.sql`INSERT INTO rollup_stat_transaction_daily (pcode, bucket_start, service_hash, service, windows, count)
      VALUES (7, ${new Date(Date.UTC(2026, 1, 9))}, 11, '/checkout', 2, 8)`;
    const diffs = await rollupDiffs(db.sql);
    expect(diffs.filter((d) => d.startsWith("rollup_stat_transaction_daily: repeated"))).toHaveLength(1);
    await db.sql`DELETE FROM rollup_stat_transaction_daily`;
    await db.sql`DELETE FROM rollup_stat_transaction_hourly`;
    await db.sql`DELETE FROM rollup_open_days`;
  });

  it("an open day past rollup.hourly is written into the daily rollup from its hours; its view shows the same", async () => {
    await openDay(MARCH_2, 5);
    const before = await shown(MARCH_2);
    expect(before).toEqual([{ count: "10", windows: "2", time_sum: 100 }]);
    expect(await settleOpenDays(db.sql, { daily: null, hourly: APRIL })).toBe(1);
    const [stored] = await db.sql<
      { n: number }[]
    >`SELECT count(*)::int AS n FROM rollup_stat_transaction_daily WHERE bucket_start = ${new Date(MARCH_2)}`;
    expect(stored!.n).toBe(1);
    expect(await db.sql`SELECT 1 FROM rollup_open_days`).toHaveLength(0);
    // The hours can go now: the day stays.
    await db.sql`DELETE FROM rollup_stat_transaction_hourly`;
    expect(await shown(MARCH_2)).toEqual(before);
  });

  it("an open day past rollup.daily is dropped, not written into a daily month that is gone", async () => {
    await openDay(JAN_5, 3);
    await db.sql.unsafe(`DROP TABLE rollup_stat_transaction_daily_p2026_01`);
    expect(await settleOpenDays(db.sql, { daily: Date.UTC(2026, 1, 1), hourly: APRIL })).toBe(0);
    expect(await db.sql`SELECT 1 FROM rollup_open_days`).toHaveLength(0);
    expect(await shown(JAN_5)).toEqual([]);
    expect(await shown(MARCH_2)).toHaveLength(1);
  });
});
