import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TxHandle } from "../../src/db/driver/exec.ts";
import { advanceWatermark } from "../../src/db/ledger/advanceWatermark.ts";
import { ensureWritePartitions } from "../../src/db/partitions/ensureWritePartitions.ts";
import type { Row } from "../../src/db/write/row.ts";
import { replaceWindowRows } from "../../src/db/write/rowSink.ts";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";
import { recordWindow } from "../support/ledger-rows.ts";
import { partitionsFor } from "../support/partitions.ts";
import { markRollupHours, rollupDiffs } from "../support/rollup-checks.ts";

const M = 60_000;
const H = 60 * M;
const DAY0 = Date.UTC(2026, 0, 5);
let t: TestDatabase;

/** A window's rows as the write path writes them: replaced, and the rollup hours it changed marked. */
async function writeWindow(table: string, stream: string, cols: string[], start: number, end: number, rows: Row[]) {
  await ensureWritePartitions(t.sql, table, [start]);
  await t.sql.begin(async (tx: TxHandle) => {
    await replaceWindowRows(tx, table, cols, 7, start, end, rows);
    await markRollupHours(tx, { table, stream, pcode: 7, fromMs: start, toMs: end });
  });
}

beforeAll(async () => {
  t = await createTestDatabase();
  const cols = ["service_hash", "service", "count", "error", "time_sum", "time_min", "time_max"];
  // Two 30-minute windows of hour 10, one of hour 11; service 1 is slow once, service 2 fails.
  await partitionsFor(t.sql, "stat_transaction", [], DAY0);
  await partitionsFor(t.sql, "stat_remote", [], DAY0);
  const write = (start: number, rows: Record<string, unknown>[]) =>
    writeWindow("stat_transaction", "stat.transaction", cols, DAY0 + start, DAY0 + start + 30 * M, rows);
  await write(10 * H, [
    { service_hash: 1, service: "/a", count: 10, error: 0, time_sum: 100, time_min: 5, time_max: 20 },
    { service_hash: 2, service: "/b", count: 4, error: 4, time_sum: 40, time_min: 10, time_max: 10 },
  ]);
  await write(10 * H + 30 * M, [{ service_hash: 1, service: "/a", count: 30, error: 3, time_sum: 900, time_min: 2, time_max: 90 }]);
  await write(11 * H, [{ service_hash: 1, service: "/a", count: 60, error: 0, time_sum: 60, time_min: 1, time_max: 1 }]);
});
afterAll(async () => {
  await t?.drop();
});

describe("stat views over the rollups", () => {
  it("sums counts and time, weights the average by count, takes min/max, and computes the error rate", async () => {
    const rows = await t.sql`
      select bucket_start, service_hash::int, count::int, error::int, time_sum, time_avg, time_min, time_max, error_rate, windows::int
      from stat_transaction_hourly where pcode = 7 order by bucket_start, service_hash`;
    expect(rows.map((r) => ({ ...r, bucket_start: (r.bucket_start as Date).getTime() }))).toEqual([
      // (100 + 900) / (10 + 30) = 25, not the mean of the window averages (10 and 30).
      {
        bucket_start: DAY0 + 10 * H,
        service_hash: 1,
        count: 40,
        error: 3,
        time_sum: 1000,
        time_avg: 25,
        time_min: 2,
        time_max: 90,
        error_rate: 0.075,
        windows: 2,
      },
      {
        bucket_start: DAY0 + 10 * H,
        service_hash: 2,
        count: 4,
        error: 4,
        time_sum: 40,
        time_avg: 10,
        time_min: 10,
        time_max: 10,
        error_rate: 1,
        windows: 1,
      },
      {
        bucket_start: DAY0 + 11 * H,
        service_hash: 1,
        count: 60,
        error: 0,
        time_sum: 60,
        time_avg: 1,
        time_min: 1,
        time_max: 1,
        error_rate: 0,
        windows: 1,
      },
    ]);
    const [day] = await t.sql`select count::int, time_avg from stat_transaction_daily where pcode = 7 and service_hash = 1`;
    expect(day).toEqual({ count: 100, time_avg: 10.6 });
  });

  it("exists for every stat table (remote: counts only)", async () => {
    for (const type of ["sql", "httpc", "error", "remote"]) {
      for (const grain of ["hourly", "daily"]) await t.sql.unsafe(`select * from stat_${type}_${grain} limit 1`);
    }
    await writeWindow("stat_remote", "stat.remote", ["ip", "count"], DAY0, DAY0 + H, [
      { ip: "10.0.0.1", count: 2 },
      { ip: "10.0.0.2", count: 5 },
    ]);
    const [r] = await t.sql`select sum(count)::int as n from stat_remote_daily where pcode = 7`;
    expect(r?.n).toBe(7);
  });
});

describe("a re-write of hours the rollups hold already", () => {
  const cols = ["service_hash", "service", "count", "error", "time_sum", "time_min", "time_max"];
  const day2 = DAY0 + 24 * H;
  const write = (start: number, rows: Record<string, unknown>[]) =>
    writeWindow("stat_transaction", "stat.transaction", cols, day2 + start, day2 + start + H, rows);
  const daily = async () =>
    (
      await t.sql`select service_hash::int, count::int, time_min, time_max from stat_transaction_daily
        where pcode = 7 and bucket_start = ${new Date(day2)} order by service_hash`
    ).map((r) => ({ ...r }));

  it("recomputes the days of the keys it held and holds: a key gone from the day loses its row, an extreme that left is replaced", async () => {
    await write(0, [
      { service_hash: 1, service: "/a", count: 1, error: 0, time_sum: 1, time_min: 1, time_max: 500 },
      { service_hash: 5, service: "/e", count: 2, error: 0, time_sum: 2, time_min: 1, time_max: 1 },
    ]);
    await write(H, [{ service_hash: 1, service: "/a", count: 3, error: 0, time_sum: 9, time_min: 3, time_max: 3 }]);
    expect(await daily()).toEqual([
      { service_hash: 1, count: 4, time_min: 1, time_max: 500 },
      { service_hash: 5, count: 2, time_min: 1, time_max: 1 },
    ]);
    // Hour 0 again, without service 5 and without service 1's slow call; a new service 6.
    await write(0, [
      { service_hash: 1, service: "/a", count: 1, error: 0, time_sum: 1, time_min: 2, time_max: 2 },
      { service_hash: 6, service: "/f", count: 7, error: 0, time_sum: 7, time_min: 1, time_max: 1 },
    ]);
    expect(await daily()).toEqual([
      { service_hash: 1, count: 4, time_min: 2, time_max: 3 },
      { service_hash: 6, count: 7, time_min: 1, time_max: 1 },
    ]);
    // An hour re-written empty: what only it held leaves the day.
    await write(0, []);
    expect(await daily()).toEqual([{ service_hash: 1, count: 3, time_min: 3, time_max: 3 }]);
    expect(await rollupDiffs(t.sql)).toEqual([]);
  });
});

describe("stream_freshness and ledger_gaps", () => {
  it("report watermark, lag, failed/truncated/quarantined counts, holes and failed windows", async () => {
    const w = (h: number, status: "done" | "failed" | "truncated", extra = {}) =>
      recordWindow(t.sql, { stream: "stat.sql", pcode: 7, windowStart: DAY0 + h * H, windowEnd: DAY0 + (h + 1) * H, status, ...extra });
    await w(0, "done", { quarantined: 2 });
    await w(1, "failed", { error: "HTTP 500" });
    await w(2, "done");
    await w(4, "truncated", { expectedTotal: 20_000, rowsFetched: 10_000 });
    await advanceWatermark(t.sql, "stat.sql", 7, "", DAY0 + H);
    const [f] = await t.sql`
      select watermark, lag > interval '1 hour' as lagging, last_window_end, done_windows::int, failed_windows::int,
        truncated_windows::int, quarantined_records::int
      from stream_freshness where stream = 'stat.sql' and pcode = 7`;
    if (!f) throw new Error("no freshness row");
    expect({ ...f, watermark: (f.watermark as Date).getTime(), last_window_end: (f.last_window_end as Date).getTime() }).toEqual({
      watermark: DAY0 + H,
      lagging: true,
      last_window_end: DAY0 + 5 * H,
      done_windows: 2,
      failed_windows: 1,
      truncated_windows: 1,
      quarantined_records: 2,
    });
    const gaps =
      await t.sql`select gap_start, gap_end, kind, error from ledger_gaps where stream = 'stat.sql' and pcode = 7 order by gap_start`;
    expect(gaps.map((g) => [(g.gap_start as Date).getTime() - DAY0, (g.gap_end as Date).getTime() - DAY0, g.kind, g.error])).toEqual([
      [H, 2 * H, "failed", "HTTP 500"],
      [3 * H, 4 * H, "hole", null],
    ]);
  });

  it("a snapshot's captures (zero-length windows) cover no time: no hole between them; a failed capture is listed", async () => {
    const capture = (at: number, status: "done" | "failed", extra = {}) =>
      recordWindow(t.sql, { stream: "project.spot", pcode: 7, windowStart: DAY0 + at, windowEnd: DAY0 + at, status, ...extra });
    await capture(0, "done");
    await capture(10 * M, "done");
    await capture(20 * M, "failed", { error: "HTTP 503" });
    await capture(30 * M, "done");
    const gaps = await t.sql`select gap_start, kind, error from ledger_gaps where stream = 'project.spot' order by gap_start`;
    expect(gaps.map((g) => [(g.gap_start as Date).getTime() - DAY0, g.kind, g.error])).toEqual([[20 * M, "failed", "HTTP 503"]]);
  });
});
