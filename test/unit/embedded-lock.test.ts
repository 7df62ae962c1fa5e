// The embedded data directory's lock on its own: who is a live holder (waited for, then named in
// one line) and who is a dead one (taken over at once): a pid that is gone, a pid now used by a
// process started at another time, and a holder in another pid namespace that went silent.
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  DataDirBusyError,
  LOCK_FILE,
  type LockHolder,
  lockDataDir,
  SILENT_STALE_MS,
  thisProcess,
  UNREADABLE_STALE_MS,
} from "../../src/db/driver/embedded-lock.ts";

let dir: string;
const lockFile = () => join(dir, LOCK_FILE);
const plant = (h: Partial<LockHolder>) => writeFileSync(lockFile(), JSON.stringify({ ...thisProcess(), command: "apm-sync sync", ...h }));

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "apm-lock-unit-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** Takes the lock with a short wait; returns what the wait was told (nothing: not waited). */
async function take(waitMs = 300): Promise<string[]> {
  const told: string[] = [];
  const lock = await lockDataDir(dir, { waitMs, onWait: (h) => told.push(h) });
  expect(JSON.parse(readFileSync(lockFile(), "utf8")).pid).toBe(process.pid);
  lock.release();
  expect(existsSync(lockFile())).toBe(false);
  return told;
}

describe("the embedded data directory's lock", () => {
  it("is free: taken, written with this process, removed on release", async () => {
    expect(await take()).toEqual([]);
  });

  it("waits for a live holder, then fails naming it (pid, command, since) and what to do", async () => {
    plant({ pid: process.pid, since: "2026-01-02T03:04:05.000Z" });
    const told: string[] = [];
    const error = await lockDataDir(dir, { waitMs: 300, onWait: (h) => told.push(h) }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DataDirBusyError);
    expect(told).toEqual([`pid ${process.pid} (apm-sync sync, since 2026-01-02T03:04:05.000Z)`]);
    const message = (error as Error).message;
    expect(message.split("\n")).toHaveLength(1);
    expect(message).toContain(`in use by pid ${process.pid} (apm-sync sync, since 2026-01-02T03:04:05.000Z); gave up after 0 s`);
    expect(message).toContain(`if no such process runs, delete ${lockFile()}`);
    // Still the holder's.
    expect(JSON.parse(readFileSync(lockFile(), "utf8")).since).toBe("2026-01-02T03:04:05.000Z");
  });

  it("takes over from a holder whose pid is gone", async () => {
    const gone = spawnSync(process.execPath, ["-e", "0"]).pid;
    plant({ pid: gone });
    expect(await take()).toEqual([]);
  });

  it("takes over from a holder whose pid now belongs to a process started at another time", async () => {
    expect(thisProcess().start).not.toBeNull();
    plant({ pid: process.pid, start: "1" });
    expect(await take()).toEqual([]);
  });

  it("waits for a holder in another pid namespace while it beats, takes over once it went silent", async () => {
    plant({ pid: 1, pidNs: "pid:[1]" });
    await expect(lockDataDir(dir, { waitMs: 200 })).rejects.toThrow(/in use by pid 1 \(apm-sync sync, since .*\) in another container/);
    const silent = new Date(Date.now() - SILENT_STALE_MS - 60_000);
    utimesSync(lockFile(), silent, silent);
    expect(await take()).toEqual([]);
  });

  // Issue 38: an empty or garbage lock file blocked every opener for 10 minutes as "a process
  // writing the lock file now"; its maker writes it right after creating it.
  it.each([
    ["empty", ""],
    ["holding garbage", "not json"],
    ["cut short", '{"pid": 12'],
  ])("takes over at once a lock file older than a few seconds, %s", async (_what, content) => {
    writeFileSync(lockFile(), content);
    const old = new Date(Date.now() - UNREADABLE_STALE_MS - 2_000);
    utimesSync(lockFile(), old, old);
    expect(await take()).toEqual([]);
  });

  it("waits for a lock file just created and still empty, then takes it over by its own clock (the file's may be off)", async () => {
    writeFileSync(lockFile(), "");
    await expect(lockDataDir(dir, { waitMs: 300 })).rejects.toThrow(/in use by a process that is writing the lock file now/);
    // A shared volume whose clock is ahead: the file looks new for an hour.
    const ahead = new Date(Date.now() + 3_600_000);
    utimesSync(lockFile(), ahead, ahead);
    const started = performance.now();
    expect(await take(30_000)).toEqual(["a process that is writing the lock file now"]);
    expect(performance.now() - started).toBeGreaterThanOrEqual(UNREADABLE_STALE_MS);
    expect(performance.now() - started).toBeLessThan(UNREADABLE_STALE_MS + 2_000);
  });
});
