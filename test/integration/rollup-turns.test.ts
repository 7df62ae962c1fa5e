// Windows of one statistic and project in flight at once (src/db/refreshRollups.ts): a window on the
// hourly grid that adds new hours to an open day it does not complete writes nothing of the day and
// takes no turn; the first window of a day, the one that completes it and a re-fetch take turns.
// Whatever the interleaving, the rollups equal a GROUP BY of the raw rows, every bucket's coverage
// is the ledger's, and a day whose last windows were in flight together is closed after the run.
import type postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureWritePartitions } from "../../src/db/ensureWritePartitions.ts";
import { recordWindow } from "../../src/db/recordWindow.ts";
import { closeCompleteDays, refreshRollups } from "../../src/db/refreshRollups.ts";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";
import { coverageDiffs, rollupDiffs } from "../support/rollup-checks.ts";
import { HOUR } from "../support/time.ts";

const DAY0 = Date.UTC(2026, 2, 9);
const STREAM = "stat.transaction";
const PCODE = 7;

let db: TestDatabase;

/** What a window's transaction writes for one whole hour: its raw row, its ledger row, its rollups. */
async function writeHour(tx: postgres.TransactionSql, hour: number, count: number, day = DAY0): Promise<void> {
  const [from, to] = [day + hour * HOUR, day + (hour + 1) * HOUR];
  await tx`DELETE FROM stat_transaction WHERE pcode = ${PCODE} AND window_start = ${new Date(from)}`;
  await tx`INSERT INTO stat_transaction (pcode, window_start, window_end, service_hash, service, count, error, time_sum, time_min, time_max)
    VALUES (${PCODE}, ${new Date(from)}, ${new Date(to)}, 11, '/checkout', ${count}, 1, ${count * 10}, 2, 90)`;
  await recordWindow(tx, { stream: STREAM, pcode: PCODE, windowStart: from, windowEnd: to, status: "done" });
  await refreshRollups(tx, {
    table: "stat_transaction",
    pcode: PCODE,
    scope: {},
    stream: STREAM,
    fromMs: from,
    toMs: to,
    wholeHours: true,
  });
}

/** Writes `hours` one after another, each in its own transaction. */
async function writeHours(hours: readonly number[], count = 5, day = DAY0): Promise<void> {
  for (const hour of hours) await db.sql.begin((tx) => writeHour(tx, hour, count, day));
}

/** A window's transaction left open after its writes: `commit()` ends it. */
async function openWindow(hour: number, count: number, day = DAY0) {
  return openTransaction((tx) => writeHour(tx, hour, count, day));
}

/** A transaction left open after `write`: `commit()` ends it. */
async function openTransaction(write: (tx: postgres.TransactionSql) => Promise<void>) {
  let commit!: () => void;
  const release = new Promise<void>((resolve) => {
    commit = resolve;
  });
  let written!: () => void;
  const wrote = new Promise<void>((resolve) => {
    written = resolve;
  });
  const done = db.sql.begin(async (tx) => {
    await write(tx);
    written();
    await release;
  });
  await Promise.race([wrote, done]);
  return {
    commit: () => {
      commit();
      return done;
    },
  };
}

/** Resolves once `write` has ended, or is waiting for a lock another transaction holds (its turn, a row). */
async function endedOrWaiting(write: Promise<unknown>): Promise<void> {
  let ended = false;
  write.then(
    () => (ended = true),
    () => (ended = true),
  );
  while (!ended) {
    const [w] = await db.sql<{ n: number }[]>`
      SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()`;
    if (w!.n > 0) return;
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** A window's transaction that fails rather than wait more than `ms` for a lock. */
const impatient = (hour: number, count: number, ms = 2000) =>
  db.sql.begin(async (tx) => {
    await tx.unsafe(`SET LOCAL lock_timeout = '${ms}ms'`);
    await writeHour(tx, hour, count);
  });

const state = async (day = DAY0) => {
  const [row] = await db.sql<{ open: number; stored: number; covered: number | null }[]>`
    SELECT (SELECT count(*)::int FROM rollup_open_days WHERE source = 'stat_transaction' AND pcode = ${PCODE} AND bucket_start = ${new Date(day)}) AS open,
      (SELECT count(*)::int FROM rollup_stat_transaction_daily WHERE pcode = ${PCODE} AND bucket_start = ${new Date(day)}) AS stored,
      (SELECT coverage FROM rollup_coverage WHERE stream = ${STREAM} AND grain = 'daily' AND pcode = ${PCODE} AND bucket_start = ${new Date(day)}) AS covered`;
  return row!;
};

const exact = async () => {
  expect(await rollupDiffs(db.sql)).toEqual([]);
  expect(await coverageDiffs(db.sql)).toEqual([]);
};

beforeAll(async () => {
  db = await createTestDatabase();
  await ensureWritePartitions(db.sql, "stat_transaction", [DAY0]);
});
afterAll(async () => db?.drop());

describe("windows of one day in flight at once", () => {
  it("new hours of an open day take no turn: a window's write does not wait for another's commit", async () => {
    await writeHours([0]);
    expect(await state()).toMatchObject({ open: 1, stored: 0, covered: null });
    const first = await openWindow(1, 5);
    // Would wait for the first window's commit (and fail here) if it took its turn.
    await impatient(2, 5).finally(first.commit);
    await exact();
  });

  it("two last hours in flight together each leave the day open; it is closed exactly after the run", async () => {
    await writeHours(Array.from({ length: 19 }, (_, i) => i + 3));
    const h22 = await openWindow(22, 5);
    await impatient(23, 5).finally(h22.commit);
    // Wholly covered, but neither window saw the other's hour.
    expect(await state()).toMatchObject({ open: 1, stored: 0 });
    await exact();
    await db.sql.begin((tx) => closeCompleteDays(tx, "stat_transaction", PCODE, STREAM));
    expect(await state()).toEqual({ open: 0, stored: 1, covered: 1 });
    await exact();
  });

  it("re-fetches of a closed day's hours take turns: the day ends closed with the new rows", async () => {
    const h5 = await openWindow(5, 40);
    // The first re-fetch holds the day's turn until it commits.
    const refused = await impatient(6, 60, 300).then(
      () => "",
      (e: Error) => e.message,
    );
    const h6 = db.sql.begin((tx) => writeHour(tx, 6, 60));
    await endedOrWaiting(h6);
    await h5.commit();
    await h6;
    expect(refused).toMatch(/lock timeout/);
    expect(await state()).toEqual({ open: 0, stored: 1, covered: 1 });
    await exact();
    const [day] = await db.sql<{ count: string }[]>`
      SELECT count::text FROM stat_transaction_daily WHERE pcode = ${PCODE} AND bucket_start = ${new Date(DAY0)}`;
    expect(day!.count).toBe(String(22 * 5 + 40 + 60));
  });

  it("a re-fetch of an open day's hour takes its turn: the window completing the day meanwhile waits, and closes it with the new rows", async () => {
    const day1 = DAY0 + 24 * HOUR;
    await writeHours(
      Array.from({ length: 23 }, (_, i) => i),
      5,
      day1,
    );
    const refetch = await openWindow(5, 70, day1);
    const last = db.sql.begin((tx) => writeHour(tx, 23, 5, day1));
    await endedOrWaiting(last);
    await refetch.commit();
    await last;
    expect(await state(day1)).toEqual({ open: 0, stored: 1, covered: 1 });
    await exact();
  });

  it("a re-fetch answered for half its hour takes its turn: the window completing the day meanwhile leaves it open", async () => {
    const day2 = DAY0 + 48 * HOUR;
    await writeHours(
      Array.from({ length: 23 }, (_, i) => i),
      5,
      day2,
    );
    const [from, half] = [day2 + 5 * HOUR, day2 + 5.5 * HOUR];
    // Without its turn it would see 23.5 hours covered, and the last window 24 (the half hour's old whole).
    const short = await openTransaction(async (tx) => {
      await tx`DELETE FROM stat_transaction WHERE pcode = ${PCODE} AND window_start = ${new Date(from)}`;
      await tx`DELETE FROM sync_windows WHERE stream = ${STREAM} AND pcode = ${PCODE} AND window_start = ${new Date(from)}`;
      await tx`INSERT INTO stat_transaction (pcode, window_start, window_end, service_hash, service, count, error, time_sum, time_min, time_max)
        VALUES (${PCODE}, ${new Date(from)}, ${new Date(half)}, 11, '/checkout', 70, 1, 700, 2, 90)`;
      await recordWindow(tx, { stream: STREAM, pcode: PCODE, windowStart: from, windowEnd: half, status: "done" });
      const change = { table: "stat_transaction", pcode: PCODE, scope: {}, stream: STREAM, fromMs: from, toMs: from + HOUR };
      await refreshRollups(tx, { ...change, wholeHours: false });
    });
    const last = db.sql.begin((tx) => writeHour(tx, 23, 5, day2));
    await endedOrWaiting(last);
    await short.commit();
    await last;
    expect(await state(day2)).toEqual({ open: 1, stored: 0, covered: null });
    await exact();
  });

  it("a re-fetch that leaves an hour uncovered reopens the day, its coverage from its hours", async () => {
    await db.sql.begin(async (tx) => {
      await tx`DELETE FROM stat_transaction WHERE pcode = ${PCODE} AND window_start = ${new Date(DAY0 + 7 * HOUR)}`;
      await tx`DELETE FROM sync_windows WHERE stream = ${STREAM} AND pcode = ${PCODE} AND window_start = ${new Date(DAY0 + 7 * HOUR)}`;
      const change = { table: "stat_transaction", pcode: PCODE, scope: {}, stream: STREAM, fromMs: DAY0 + 7 * HOUR, toMs: DAY0 + 8 * HOUR };
      await refreshRollups(tx, { ...change, wholeHours: true });
    });
    expect(await state()).toEqual({ open: 1, stored: 0, covered: null });
    const [day] = await db.sql<{ coverage: number }[]>`
      SELECT DISTINCT coverage FROM stat_transaction_daily WHERE pcode = ${PCODE} AND bucket_start = ${new Date(DAY0)}`;
    expect(day!.coverage).toBeCloseTo(23 / 24, 12);
    await exact();
  });
});
