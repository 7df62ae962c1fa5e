import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase } from "../../src/db/driver/connect.ts";
import { isTransientDbError } from "../../src/db/driver/transient.ts";
import { withAdvisoryLock } from "../../src/db/driver/withAdvisoryLock.ts";
import { advanceWatermark } from "../../src/db/ledger/advanceWatermark.ts";
import { finishRun } from "../../src/db/ledger/finishRun.ts";
import { readLedger } from "../../src/db/ledger/readLedger.ts";
import { readWatermark } from "../../src/db/ledger/readWatermark.ts";
import { startRun } from "../../src/db/ledger/startRun.ts";
import { insertQuarantine } from "../../src/db/write/insertQuarantine.ts";
import { replaceWindowRows } from "../../src/db/write/rowSink.ts";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";
import { recordWindow } from "../support/ledger-rows.ts";
import { takeOnce, takeRetrying } from "../support/lock.ts";
import { partitionsFor } from "../support/partitions.ts";
import { cutOnStatement, startPgProxy } from "../support/pg-proxy.ts";
import { waitFor, waitsForAdvisoryLock } from "../support/wait-for.ts";

const H = 3_600_000;
const T0 = Date.UTC(2026, 0, 5, 10);
let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t?.drop();
});

describe("ledger", () => {
  it("records a window once per key and updates it on re-fetch", async () => {
    const base = { stream: "stat.transaction", pcode: 7, windowStart: T0, windowEnd: T0 + H };
    const id1 = await recordWindow(t.sql, { ...base, status: "failed", error: "HTTP 503", requests: 3, retries: 2 });
    const id2 = await recordWindow(t.sql, {
      ...base,
      status: "truncated",
      expectedTotal: 12_000,
      rowsFetched: 10_000,
      rowsWritten: 10_000,
      requests: 1,
      splits: 3,
    });
    expect(id2).toBe(id1);
    await recordWindow(t.sql, { ...base, windowStart: T0 + 2 * H, windowEnd: T0 + 3 * H, status: "done", rowsFetched: 5 });
    await recordWindow(t.sql, { ...base, partition: "host:80", status: "done" });
    const entries = await readLedger(t.sql, { stream: "stat.transaction", pcode: 7 });
    expect(entries.map((e) => [e.windowStart, e.status, e.expectedTotal, e.rowsFetched, e.error])).toEqual([
      [T0, "truncated", 12_000, 10_000, null],
      [T0 + 2 * H, "done", null, 5, null],
    ]);
    expect(await readLedger(t.sql, { stream: "stat.transaction", pcode: 7, from: T0 + H, to: T0 + 3 * H })).toHaveLength(1);
    await expect(recordWindow(t.sql, { ...base, status: "weird" as "done" })).rejects.toMatchObject({ code: "23514" });
  });

  it("keeps gone_from only on a gone window: a window that is not pruned or archived has none", async () => {
    const base = { stream: "stat.sql", pcode: 9, windowStart: T0, windowEnd: T0 + H };
    await recordWindow(t.sql, { ...base, status: "failed" });
    const at = t.sql`stream = ${base.stream} and pcode = ${base.pcode}`;
    // What prune does: the status goes, and what it was is kept.
    await t.sql`update sync_windows set gone_from = status, status = 'pruned' where ${at}`;
    // A window that is not gone cannot carry one (a restore or a fetch must clear it).
    await expect(t.sql`update sync_windows set status = 'done' where ${at}`).rejects.toMatchObject({ code: "23514" });
    await t.sql`update sync_windows set status = coalesce(gone_from, 'done'), gone_from = null where ${at}`;
    expect(await t.sql`select status, gone_from from sync_windows where ${at}`).toEqual([{ status: "failed", gone_from: null }]);
  });

  it("never moves a watermark backwards", async () => {
    expect(await readWatermark(t.sql, "visitors.5m", 7)).toBeNull();
    expect(await advanceWatermark(t.sql, "visitors.5m", 7, "", T0 + 2 * H)).toBe(T0 + 2 * H);
    expect(await advanceWatermark(t.sql, "visitors.5m", 7, "", new Date(T0))).toBe(T0 + 2 * H);
    expect(await advanceWatermark(t.sql, "visitors.5m", 7, "", T0 + 3 * H)).toBe(T0 + 3 * H);
    expect(await advanceWatermark(t.sql, "visitors.5m", 8, "", T0)).toBe(T0);
    expect(await readWatermark(t.sql, "visitors.5m", 7)).toBe(T0 + 3 * H);
  });

  it("rolls a failed transaction back whole: rows, ledger and watermark", async () => {
    await partitionsFor(t.sql, "stat_remote", [], T0);
    await expect(
      t.sql.begin(async (tx) => {
        await replaceWindowRows(tx, "stat_remote", ["ip", "count"], 11, T0, T0 + H, [{ ip: "10.0.0.1", count: 1 }]);
        await recordWindow(tx, { stream: "stat.remote", pcode: 11, windowStart: T0, windowEnd: T0 + H, status: "done" });
        await advanceWatermark(tx, "stat.remote", 11, "", T0 + H);
        throw new Error("crash before commit");
      }),
    ).rejects.toThrow("crash before commit");
    const [n] = await t.sql`select (select count(*) from stat_remote where pcode = 11)::int as rows,
      (select count(*) from sync_windows where pcode = 11)::int as ledger, (select count(*) from watermarks where pcode = 11)::int as wm`;
    expect(n).toEqual({ rows: 0, ledger: 0, wm: 0 });
  });
});

describe("withAdvisoryLock", () => {
  it("blocks a second holder from another process (pool) and from this one, then frees the lock", async () => {
    const other = await openDatabase({ databaseUrl: t.url, dataDir: "", dbSchema: "apm" });
    try {
      let inner: unknown;
      let sameProcess: unknown;
      const outer = await withAdvisoryLock(
        t,
        "stat.sql",
        7,
        async () => {
          inner = await withAdvisoryLock(other, "stat.sql", 7, async () => "should not run", takeOnce);
          sameProcess = await withAdvisoryLock(t, "stat.sql", 7, async () => "should not run", takeOnce);
          const otherStream = await withAdvisoryLock(other, "stat.sql", 8, async () => "other pcode ok", takeOnce);
          return otherStream;
        },
        takeOnce,
      );
      expect(outer).toEqual({ acquired: true, value: { acquired: true, value: "other pcode ok" } });
      expect(inner).toEqual({ acquired: false });
      expect(sameProcess).toEqual({ acquired: false });
      expect(await withAdvisoryLock(other, "stat.sql", 7, async () => 42, takeOnce)).toEqual({ acquired: true, value: 42 });
      // A throwing body still releases the lock.
      await expect(withAdvisoryLock(t, "stat.sql", 7, async () => Promise.reject(new Error("boom")), takeOnce)).rejects.toThrow("boom");
      expect(await withAdvisoryLock(other, "stat.sql", 7, async () => 1, takeOnce)).toEqual({ acquired: true, value: 1 });
    } finally {
      await other.close();
    }
  });

  it("is asked for again while the database is away for as long as the caller's retry allows, and not at all without one", async () => {
    const proxy = await startPgProxy(t.url);
    // Every connection cut (and new ones dropped for 0.3 s) as the lock is asked for, 3 times.
    const cut = cutOnStatement(proxy, "pg_try_advisory_lock(", 3, 0.3);
    const through = await openDatabase({ databaseUrl: proxy.url, dataDir: "", dbSchema: "apm" }, undefined, { debug: cut.debug });
    try {
      const failed = await withAdvisoryLock(through, "stat.sql", 9, async () => "ran", takeOnce).catch((e: unknown) => e);
      expect({ cuts: cut.cuts(), transient: isTransientDbError(failed) }).toEqual({ cuts: 1, transient: true });
      cut.reset();
      const held = await withAdvisoryLock(through, "stat.sql", 9, async () => "ran", takeRetrying);
      expect({ held, cuts: cut.cuts() }).toEqual({ held: { acquired: true, value: "ran" }, cuts: 3 });
    } finally {
      await through.close();
      await proxy.close();
    }
  });
});

describe("a lock lost with its connection", () => {
  /** Ends the backend that holds the session lock of (stream, pcode), as a failover would. */
  async function killHolder(stream: string, pcode: number): Promise<number> {
    const [row] = await t.sql<{ pid: number }[]>`SELECT l.pid FROM pg_locks l WHERE l.locktype = 'advisory' AND l.granted
      AND l.objsubid = 2 AND l.classid = hashtext(current_schema() || '/' || ${stream})::oid AND l.objid = hashtext(${String(pcode)})::oid`;
    expect(row?.pid).toBeTypeOf("number");
    await t.sql`SELECT pg_terminate_backend(${row!.pid})`;
    await waitFor(`backend ${row!.pid} to end`, async () => {
      const [alive] = await t.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM pg_stat_activity WHERE pid = ${row!.pid}`;
      return alive?.n === 0;
    });
    return row!.pid;
  }

  it("is not confirmed in a write, is re-taken on a new connection, or refused once another process has it", async () => {
    const other = await openDatabase({ databaseUrl: t.url, dataDir: "", dbSchema: "apm" });
    try {
      const result = await withAdvisoryLock(
        t,
        "stat.error",
        9,
        async (lock) => {
          expect(await t.sql.begin((tx) => lock.confirm(tx))).toBe(true);
          const first = await killHolder("stat.error", 9);
          expect(await t.sql.begin((tx) => lock.confirm(tx))).toBe(false);
          // Another process takes it meanwhile: this one must not write.
          const taken = await withAdvisoryLock(other, "stat.error", 9, async () => lock.ensure(), takeOnce);
          expect(taken).toEqual({ acquired: true, value: false });
          // Free again: re-taken on a new connection, and confirmed in writes again.
          expect(await lock.ensure()).toBe(true);
          expect(await t.sql.begin((tx) => lock.confirm(tx))).toBe(true);
          expect(await killHolder("stat.error", 9)).not.toBe(first);
          return "done";
        },
        takeOnce,
      );
      expect(result).toEqual({ acquired: true, value: "done" });
    } finally {
      await other.close();
    }
  });

  it("a new holder waits for a write the old holder confirmed (the fence)", async () => {
    const other = await openDatabase({ databaseUrl: t.url, dataDir: "", dbSchema: "apm" });
    // The test before ended this process's lock connection while it held the lock: that session
    // was ended, not reused (asked for once, the lock is taken on a client of its own).
    try {
      await withAdvisoryLock(
        t,
        "stat.httpc",
        9,
        async (lock) => {
          let release!: () => void;
          const gate = new Promise<void>((r) => {
            release = r;
          });
          const confirmed = new Promise<boolean>((resolve, reject) => {
            t.sql
              .begin(async (tx) => {
                resolve(await lock.confirm(tx));
                await gate;
              })
              .catch(reject);
          });
          expect(await confirmed).toBe(true);
          await killHolder("stat.httpc", 9);
          let takenAt = 0;
          const takeover = withAdvisoryLock(
            other,
            "stat.httpc",
            9,
            async () => {
              takenAt = Date.now();
            },
            takeOnce,
          );
          // The takeover is queued on the lock (pg_locks), and has not run.
          await waitFor("the takeover to wait for the lock", () => waitsForAdvisoryLock(t.sql));
          expect(takenAt).toBe(0);
          const committedAt = Date.now();
          release();
          expect(await takeover).toEqual({ acquired: true, value: undefined });
          expect(takenAt).toBeGreaterThanOrEqual(committedAt);
        },
        takeOnce,
      );
    } finally {
      await other.close();
    }
  });
});

describe("runs and quarantine", () => {
  it("records a run and quarantined records (JSON and non-JSON)", async () => {
    const runId = await startRun(t.sql, { command: "sync", args: { streams: ["stat.sql"] }, version: "0.1.0" });
    const copied = await insertQuarantine(t.sql, [
      {
        runId,
        stream: "events",
        pcode: 7,
        windowStart: T0,
        windowEnd: T0 + H,
        recordIndex: 3,
        raw: { id: "44,", big: 2n ** 64n },
        reason: "id: not a number",
      },
      { runId, stream: "events", pcode: 7, raw: "{truncated", reason: "body is not JSON" },
    ]);
    expect(copied).toEqual({ rows: 2, replaced: 0 });
    await finishRun(t.sql, runId, "partial", { "stat.sql": { windows: 3 } });
    const [run] = await t.sql`select command, args, status, counts, finished_at is not null as finished from sync_runs where id = ${runId}`;
    expect(run).toEqual({
      command: "sync",
      args: { streams: ["stat.sql"] },
      status: "partial",
      counts: { "stat.sql": { windows: 3 } },
      finished: true,
    });
    const q = await t.sql`select record_index, raw::text as raw, raw_text, reason from quarantine where run_id = ${runId} order by id`;
    expect(q.map((r) => [r.record_index, r.raw, r.raw_text, r.reason])).toEqual([
      [3, '{"id": "44,", "big": 18446744073709551616}', null, "id: not a number"],
      [null, null, "{truncated", "body is not JSON"],
    ]);
  });
});
