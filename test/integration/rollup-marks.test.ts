// A window's marks say whether its rows are whole hours (db/ledger/windowStatements.ts): a statistic's
// views read whole hours from the raw rows, so the refresher recomputes its hourly table only for
// the hours split leaves (or windows off the hour) wrote, and still clears every marked hour. Checked
// by their effect: the marks as stored, the hourly table after each refresh, the views against a
// GROUP BY of the raw rows (test/support/rollup-checks.ts).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type LedgerRow, recordWindows } from "../../src/db/ledger/windowStatements.ts";
import { ensureWritePartitions } from "../../src/db/partitions/ensureWritePartitions.ts";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";
import { refresh, rollupDiffs } from "../support/rollup-checks.ts";
import { HOUR } from "../support/time.ts";

const H = Date.UTC(2026, 3, 2, 3);
let db: TestDatabase;

/** Replaces the stat_transaction rows of the hour at H with one row per window, recorded as the engine records them. */
async function writeHour(windows: readonly (readonly [number, number])[], count: number) {
  await db.sql`DELETE FROM stat_transaction WHERE window_start >= ${new Date(H)} AND window_start < ${new Date(H + HOUR)}`;
  for (const [from, to] of windows)
    await db.sql`INSERT INTO stat_transaction (pcode, window_start, window_end, service_hash, service, count, error, time_sum)
      VALUES (7, ${new Date(from)}, ${new Date(to)}, 11, '/checkout', ${count}, 0, ${count * 10})`;
  const ledger: LedgerRow[] = windows.map(([from, to]) => ({ windowStart: from, windowEnd: to, status: "done" }));
  await recordWindows(db.sql, {
    window: { stream: "stat.transaction", pcode: 7, partition: "" },
    runId: null,
    ledger,
    marks: { source: "stat_transaction", spans: [{ fromMs: H, toMs: H + HOUR }] },
    watermark: null,
  });
}

const marks = () => db.sql<{ partial: boolean }[]>`SELECT partial FROM rollup_marks WHERE source = 'stat_transaction'`;
const hourlyRows = () => db.sql<{ count: string }[]>`SELECT count::text FROM rollup_stat_transaction_hourly WHERE pcode = 7`;

beforeAll(async () => {
  db = await createTestDatabase();
  await ensureWritePartitions(db.sql, "stat_transaction", [H]);
});
afterAll(async () => db?.drop());

describe("a statistic's hourly rollup and its windows' marks", () => {
  it("an hour fetched as split leaves is marked partial and kept in the hourly table", async () => {
    await writeHour(
      [
        [H, H + HOUR / 2],
        [H + HOUR / 2, H + HOUR],
      ],
      5,
    );
    expect(await marks()).toEqual([{ partial: true }]);
    expect(await rollupDiffs(db.sql)).toEqual([]);
    await refresh(db.sql);
    expect(await hourlyRows()).toEqual([{ count: "10" }]);
    expect(await rollupDiffs(db.sql)).toEqual([]);
  });

  it("the same hour fetched whole is marked whole: the refresh clears its split rows and stores none", async () => {
    await writeHour([[H, H + HOUR]], 7);
    expect(await marks()).toEqual([{ partial: false }]);
    await refresh(db.sql);
    expect(await hourlyRows()).toEqual([]);
    expect(await marks()).toEqual([]);
    // The views read the whole hour from its raw row, and the daily table holds it.
    expect(await rollupDiffs(db.sql)).toEqual([]);
    expect(await rollupDiffs(db.sql, { table: true })).toEqual([]);
  });

  it("a window off the hour is partial, though an hour long", async () => {
    await writeHour([[H + HOUR / 4, H + HOUR + HOUR / 4]], 3);
    expect(await marks()).toEqual([{ partial: true }]);
    await refresh(db.sql);
    expect(await hourlyRows()).toEqual([{ count: "3" }]);
    expect(await rollupDiffs(db.sql)).toEqual([]);
  });

  it("one statement for a transaction's windows marks each window's hours, each whole or partial by its own ledger rows", async () => {
    await refresh(db.sql);
    const next = H + 2 * HOUR;
    await recordWindows(db.sql, {
      window: { stream: "stat.transaction", pcode: 7, partition: "" },
      runId: null,
      ledger: [
        { windowStart: H, windowEnd: H + HOUR, status: "done" },
        { windowStart: next, windowEnd: next + HOUR / 2, status: "done" },
        { windowStart: next + HOUR / 2, windowEnd: next + HOUR, status: "done" },
      ],
      marks: {
        source: "stat_transaction",
        spans: [
          { fromMs: H, toMs: H + HOUR },
          { fromMs: next, toMs: next + HOUR },
        ],
      },
      watermark: null,
    });
    const stored = await db.sql<{ hour: Date; partial: boolean }[]>`
      SELECT hour, partial FROM rollup_marks WHERE source = 'stat_transaction' ORDER BY hour`;
    expect(stored.map((m) => [m.hour.getTime(), m.partial])).toEqual([
      [H, false],
      [next, true],
    ]);
  });
});
