// Run ids after a crash on the embedded database, through the real CLI: a sync, a sync killed with
// SIGKILL in the middle of its run, and a sync after it number their runs 1, 2, 3. Before, each
// open after a kill was a crash recovery that resumed the sequence from the value Postgres logs 32
// ahead (1, 34, 67). The killed run's lock file is left behind; the next run takes it over at once.
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase } from "../../src/db/driver/connect.ts";
import { LOCK_FILE } from "../../src/db/driver/embedded-lock.ts";
import { type Sandbox, startSandbox } from "../../src/sandbox/index.ts";
import { runCli, spawnCli, waitUntil } from "../support/child-sync.ts";
import { HOUR } from "../support/engine-harness.ts";
import { type GateProxy, startGateProxy } from "../support/gate-proxy.ts";

const T0 = Math.floor(Date.now() / 60_000) * 60_000;
const START = Math.floor((T0 - 3 * HOUR) / HOUR) * HOUR;

let sandbox: Sandbox;
let gate: GateProxy;
let dir: string;

const env = (baseUrl: string): Record<string, string> => ({
  APM_BASE_URL: baseUrl,
  APM_DATA_DIR: dir,
  APM_PROJECTS: sandbox.projects.map((p) => `${p.pcode}:${p.token}`).join(","),
  APM_START: new Date(START).toISOString(),
  APM_RPS: "1000",
  APM_LOG_FORMAT: "plain",
  APM_LOG_LEVEL: "info",
});
const sync = ["sync", "--streams", "stat.transaction"];
// A CLI run takes seconds, and minutes on a loaded machine.
const LONG = { timeoutMs: 600_000 };

beforeAll(async () => {
  sandbox = await startSandbox({ now: () => T0, seed: 1, projects: 1, maxRecords: 300, burstKeys: 0 });
  // The killed run's requests wait here: it is killed in the middle of its run, never after it.
  gate = await startGateProxy(sandbox.url);
  dir = mkdtempSync(join(tmpdir(), "apm-runids-"));
});

afterAll(async () => {
  await gate?.close();
  await sandbox?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("run ids on the embedded database", () => {
  it("stay consecutive across a run killed with SIGKILL", async () => {
    const first = await runCli(sync, env(sandbox.url), LONG);
    expect({ code: first.code }, first.stderr).toEqual({ code: 0 });
    const killed = spawnCli(sync, { ...env(gate.url), APM_TIMEOUT: "10m" }, LONG);
    expect(await waitUntil(killed, () => gate.connections() > 0, 20)).toBe("ready");
    expect((await killed.kill("SIGKILL")).signal).toBe("SIGKILL");
    expect(existsSync(join(dir, LOCK_FILE))).toBe(true);
    const after = await runCli(sync, { ...env(sandbox.url), APM_DATA_DIR_WAIT: "5m" }, LONG);
    expect({ code: after.code }, after.stderr).toEqual({ code: 0 });
    // The dead holder's lock was taken over, not waited for.
    expect(after.stderr).not.toContain("waiting up to");
    const db = await openDatabase({ databaseUrl: null, dataDir: dir, dbSchema: "apm" });
    try {
      const runs = await db.sql<{ id: string }[]>`SELECT id::text FROM sync_runs ORDER BY id`;
      expect(runs.map((r) => r.id)).toEqual(["1", "2", "3"]);
    } finally {
      await db.close();
    }
    expect(after.stdout).toContain("run 3: complete");
  }, 2_000_000);
});
