// One writer per embedded data directory, through the real CLI: while a `sync` holds the
// directory (its API requests held at a gate, so it holds it as long as the test needs), a second
// `sync` with a short APM_DATA_DIR_WAIT says it waits, then exits 1 with one line naming the
// holder; a `status` and a third `sync` with a long wait wait for it and then run. Before the lock
// every one of them opened the directory at once and left broken btree indexes (amcheck).
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Database, openDatabase } from "../../src/db/driver/connect.ts";
import { LOCK_FILE } from "../../src/db/driver/embedded-lock.ts";
import { type Sandbox, startSandbox } from "../../src/sandbox/index.ts";
import { brokenIndexes } from "../support/amcheck.ts";
import { type ChildExit, runCli, spawnCli, waitUntil } from "../support/child-sync.ts";
import { compareWithTruth, HOUR, ledgerRows } from "../support/engine-harness.ts";
import { type GateProxy, startGateProxy } from "../support/gate-proxy.ts";

const STREAMS = ["stat.transaction", "stat.sql", "range.transaction"];
// The CLI runs on the wall clock; the sandbox's clock is the test's start, ahead of the engine's
// horizon (now - 10 min settle) for the minutes of the test.
const T0 = Math.floor(Date.now() / 60_000) * 60_000;
const START = Math.floor((T0 - 6 * HOUR) / HOUR) * HOUR;

let sandbox: Sandbox;
let gate: GateProxy;
let dir: string;
let holderPid: number;
let second: ChildExit;
let exits: { holder: ChildExit; status: ChildExit; third: ChildExit };

function env(extra: Record<string, string> = {}): Record<string, string> {
  return {
    APM_BASE_URL: gate.url,
    APM_DATA_DIR: dir,
    APM_PROJECTS: sandbox.projects.map((p) => `${p.pcode}:${p.token}`).join(","),
    APM_START: new Date(START).toISOString(),
    APM_RPS: "1000",
    APM_CONCURRENCY: "16",
    // The holder's first requests wait at the gate for as long as the test takes.
    APM_TIMEOUT: "10m",
    APM_LOG_FORMAT: "plain",
    APM_LOG_LEVEL: "info",
    ...extra,
  };
}

const lockPid = (): number | null => {
  try {
    return (JSON.parse(readFileSync(join(dir, LOCK_FILE), "utf8")) as { pid: number }).pid;
  } catch {
    return null;
  }
};

beforeAll(async () => {
  sandbox = await startSandbox({ now: () => T0, seed: 1, projects: 1, maxRecords: 300, burstKeys: 400 });
  gate = await startGateProxy(sandbox.url);
  dir = mkdtempSync(join(tmpdir(), "apm-lock-"));
  const sync = ["sync", "--streams", STREAMS.join(",")];
  const holder = spawnCli(sync, env(), { timeoutMs: 600_000 });
  holderPid = holder.pid;
  expect(await waitUntil(holder, () => lockPid() === holder.pid && gate.connections() > 0, 20)).toBe("ready");
  second = await runCli(sync, env({ APM_DATA_DIR_WAIT: "1s" }), { timeoutMs: 300_000 });
  expect(holder.child.exitCode, "the holder must still hold the directory").toBe(null);
  const status = spawnCli(["status"], env({ APM_DATA_DIR_WAIT: "5m" }), { timeoutMs: 600_000 });
  const third = spawnCli(sync, env({ APM_DATA_DIR_WAIT: "5m" }), { timeoutMs: 600_000 });
  for (const waiter of [status, third]) expect(await waitUntil(waiter, () => waiter.stderr().includes("waiting up to"), 20)).toBe("ready");
  gate.open();
  const [h, s, t] = await Promise.all([holder.exited, status.exited, third.exited]);
  exits = { holder: h, status: s, third: t };
}, 1_200_000);

afterAll(async () => {
  await gate?.close();
  await sandbox?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("two syncs and a status on one embedded data directory", () => {
  it("the second sync waits APM_DATA_DIR_WAIT, then exits 1 with one line naming the holder and what to do", () => {
    expect({ code: second.code }, second.stderr).toEqual({ code: 1 });
    expect(second.stderr).toContain(`is in use by pid ${holderPid} (apm-sync sync --streams ${STREAMS.join(",")}, since 20`);
    expect(second.stderr).toContain("waiting up to 1 s (APM_DATA_DIR_WAIT)");
    const failure = second.stderr.split("\n").filter((l) => l.includes("gave up after"));
    expect(failure).toHaveLength(1);
    expect(failure[0]).toMatch(new RegExp(`in use by pid ${holderPid} \\(apm-sync sync .*, since \\d{4}-\\d\\d-\\d\\dT`));
    expect(failure[0]).toContain("let that run finish and run again, or raise APM_DATA_DIR_WAIT");
    // It never opened the database.
    expect(second.stderr).not.toContain("embedded database (PGlite) at");
  });

  it("the holder, the waiting status and the waiting sync all succeed, one after the other", () => {
    for (const [name, e] of Object.entries(exits)) expect({ name, code: e.code }, e.stderr.slice(-3000)).toEqual({ name, code: 0 });
    expect(exits.status.stdout).toContain("stat.transaction");
    expect(exits.holder.stderr).not.toContain("waiting up to");
  });

  it("leaves every btree index sound (amcheck) and the data equal to the sandbox's", async () => {
    expect(await brokenIndexes(join(dir, "pgdata"))).toEqual([]);
    const db: Database = await openDatabase({ databaseUrl: null, dataDir: dir, dbSchema: "apm" });
    try {
      const pcode = sandbox.projects[0]!.pcode;
      for (const opId of STREAMS) {
        const windows = (await ledgerRows(db.sql, { stream: opId })).filter((l) => l.pcode === pcode);
        let at = START;
        for (const l of windows) {
          expect({ opId, start: l.start, status: l.status }).toEqual({
            opId,
            start: at,
            status: l.status === "truncated" ? "truncated" : "done",
          });
          at = l.end;
        }
        expect(at).toBeGreaterThan(T0 - 20 * 60_000);
        const { diff, truthKeys } = await compareWithTruth({ sql: db.sql, truth: sandbox.truth }, opId, pcode, START, at);
        expect(truthKeys).toBeGreaterThan(0);
        expect({ opId, diff }).toEqual({ opId, diff: [] });
      }
      const runs = await db.sql<{ id: string; status: string }[]>`SELECT id::text, status FROM sync_runs ORDER BY id`;
      expect(runs).toEqual([
        { id: "1", status: "ok" },
        { id: "2", status: "ok" },
      ]);
    } finally {
      await db.close();
    }
  });
});
