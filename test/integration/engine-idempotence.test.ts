// No double counting (issue 4): backfill a day, then an incremental sync whose lookback re-reads
// the end of that day, then the same backfill again: per-key sums never change and equal the
// ground truth. A second identical run (backfill, and sync at the same clock) changes no row.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  COUNTED_STREAMS,
  checksums,
  compareWithTruth,
  DAY,
  type EngineHarness,
  HOUR,
  MINUTE,
  startEngineHarness,
  tableChecksum,
  tableOf,
  windowViolations,
} from "../support/engine-harness.ts";

const DAY0 = Date.UTC(2026, 0, 6);
const DAY1 = DAY0 + DAY;
// The sync runs 3 h after the backfilled day; with a 6 h lookback it re-reads DAY1 - 6 h .. DAY1.
const SYNC_NOW = DAY1 + 3 * HOUR;
const HORIZON = SYNC_NOW - 10 * MINUTE;
const STREAMS = COUNTED_STREAMS;
const HEAP = ["range.heap_use.avg", "range.heap_use.max"];
const TABLES = [...new Set([...STREAMS, ...HEAP].map(tableOf))];
// The start of history is the backfilled day, so that the backfill carries the watermark to DAY1.
const ENV = { APM_START: new Date(DAY0).toISOString(), APM_LOOKBACK: "6h" };
const backfill = { command: "backfill", mode: { kind: "backfill", from: DAY0, to: DAY1 }, streams: [...STREAMS, ...HEAP] } as const;
const sync = { command: "sync", mode: { kind: "sync" }, streams: [...STREAMS, ...HEAP] } as const;

let h: EngineHarness;
const timings: string[] = [];

async function timed<T>(label: string, f: () => Promise<T>): Promise<T> {
  const t0 = performance.now();
  try {
    return await f();
  } finally {
    timings.push(`${label} ${Math.round(performance.now() - t0)} ms`);
  }
}

async function sumsOf(from: number, to: number): Promise<Record<string, Map<string, number>>> {
  const out: Record<string, Map<string, number>> = {};
  for (const pcode of h.pcodes) {
    for (const opId of STREAMS) {
      const c = await compareWithTruth(h, opId, pcode, from, to);
      expect({ opId, pcode, diff: c.diff }).toEqual({ opId, pcode, diff: [] });
      expect(c.truthKeys).toBeGreaterThan(0);
      out[`${opId}/${pcode}`] = c.db;
    }
  }
  return out;
}

/** Data tables plus the ledger and watermarks minus their bookkeeping columns. */
async function allChecksums(): Promise<Record<string, string>> {
  return {
    ...(await checksums(h.sql, TABLES)),
    sync_windows: await tableChecksum(h.sql, "sync_windows", ["id", "started_at", "finished_at"]),
    watermarks: await tableChecksum(h.sql, "watermarks", ["updated_at"]),
    quarantine: await tableChecksum(h.sql, "quarantine", ["id", "created_at"]),
  };
}

beforeAll(async () => {
  h = await startEngineHarness({ now: SYNC_NOW, maxRecords: 300, burstKeys: 400, projects: 2, env: ENV });
}, 60_000);

afterAll(async () => {
  process.stderr.write(`engine-idempotence: ${timings.join(", ")}\n`);
  await h?.close();
});

describe("backfill, overlapping sync, backfill again", () => {
  // Three runs of a day of 12 streams: ~30 s alone, twice that beside other files on 2 CPUs.
  it("never double counts: sums stay equal to the ground truth", async () => {
    const first = await timed("backfill", () => h.run(backfill));
    expect(first.exitCode).toBe(0);
    expect([...first.streams.values()].reduce((s, c) => s + c.splits, 0)).toBeGreaterThan(0);
    const afterBackfill = await sumsOf(DAY0, DAY1);
    const [wm] = await h.sql<{ n: number }[]>`
      SELECT count(*)::int AS n FROM watermarks WHERE watermark = ${new Date(DAY1)}`;
    expect(wm!.n).toBe(h.pcodes.length * (STREAMS.length + HEAP.length));

    h.sandbox.clearLog();
    const inc = await timed("sync", () => h.run(sync));
    expect(inc.exitCode).toBe(0);
    // The sync really re-read part of the backfilled day (lookback), for every stream.
    for (const opId of [...STREAMS, ...HEAP]) {
      const reread = h.sandbox.requestLog.filter((e) => e.opId === opId && e.stime !== null && e.stime < DAY1);
      expect({ opId, reread: reread.length > 0 }).toEqual({ opId, reread: true });
    }
    expect(h.sandbox.requestLog.every((e) => e.etime === null || e.etime <= HORIZON)).toBe(true);
    expect(await sumsOf(DAY0, DAY1)).toEqual(afterBackfill);
    await sumsOf(DAY0, HORIZON);

    const again = await timed("backfill again", () => h.run(backfill));
    expect(again.exitCode).toBe(0);
    expect(await sumsOf(DAY0, DAY1)).toEqual(afterBackfill);
    await sumsOf(DAY0, HORIZON);
    expect(windowViolations(h.sandbox.requestLog)).toEqual([]);
  }, 300_000);

  it("a second identical run changes no row (checksums without synced_at/run_id)", async () => {
    const before = await allChecksums();
    // Every data table has rows (an empty table would compare equal for nothing).
    expect(Object.entries(before).filter(([t, c]) => t !== "quarantine" && c.startsWith("0:"))).toEqual([]);
    const repeat = await timed("identical backfill", () => h.run(backfill));
    expect(repeat.exitCode).toBe(0);
    expect(await allChecksums()).toEqual(before);
    const resync = await timed("identical sync", () => h.run(sync));
    expect(resync.exitCode).toBe(0);
    expect([...resync.streams.values()].reduce((s, c) => s + c.rows, 0)).toBeGreaterThan(0);
    expect(await allChecksums()).toEqual(before);
    // Rows were rewritten, not skipped: run_id of the re-read windows is the new run's.
    const [rewritten] = await h.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM stat_transaction WHERE run_id = ${resync.runId}`;
    expect(rewritten!.n).toBeGreaterThan(0);
  }, 300_000);

  it("the checksum ignores run_id/synced_at but sees a changed value", async () => {
    const before = await tableChecksum(h.sql, "stat_remote");
    await h.sql`UPDATE stat_remote SET run_id = -1, synced_at = now() - interval '1 day'`;
    expect(await tableChecksum(h.sql, "stat_remote")).toBe(before);
    await h.sql`UPDATE stat_remote SET count = count + 1 WHERE ctid = (SELECT ctid FROM stat_remote LIMIT 1)`;
    expect(await tableChecksum(h.sql, "stat_remote")).not.toBe(before);
  });
});
