// The embedded database's disk floor (APM_DISK_FLOOR), through the real CLI. Without it, PGlite
// spun at full CPU for good, deaf to SIGTERM, once its disk could not take a WAL segment. Here:
// - a floor above the disk's free space: the command exits 1 at once, says what to do, and makes
//   no database;
// - a disk that fills up during a backfill (a tmpfs of its own, where this process may mount one):
//   the run exits 1, one error a stream and the reason, keeps what it committed,
//   and once the disk is larger a second backfill completes, `verify` agreeing with the server.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Sandbox, startSandbox } from "../../src/sandbox/index.ts";
import { runCli } from "../support/child-sync.ts";

const MIB = 1024 * 1024;
let sandbox: Sandbox;
let dir: string;

beforeAll(async () => {
  sandbox = await startSandbox({ seed: 5, projects: 2, burstKeys: 0 });
  dir = mkdtempSync(join(tmpdir(), "apm-disk-"));
});

afterAll(async () => {
  await sandbox?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const env = (dataDir: string, floor: number) => ({
  APM_DATA_DIR: dataDir,
  DATABASE_URL: "",
  APM_BASE_URL: sandbox.url,
  APM_PROJECTS: sandbox.projects.map((p) => `${p.pcode}:${p.token}`).join(","),
  APM_DISK_FLOOR: String(floor),
  APM_CONCURRENCY: "16",
  APM_LOG_FORMAT: "plain",
});
const STREAMS = ["--streams", "stat.sql,stat.transaction"];
const WHAT_TO_DO = "then run the command again; what was committed is kept";

describe("the embedded database's disk floor", () => {
  it("a floor above the disk's free space: exit 1 at once with what to do, no database made", async () => {
    const data = join(dir, "over");
    const run = await runCli(["backfill", "--from", "1d", "--to", "now", ...STREAMS], env(data, 2 ** 50), { timeoutMs: 120_000 });
    expect(run.code, run.stderr).toBe(1);
    expect(run.stderr).toContain(`the disk holding the embedded database (${data})`);
    expect(run.stderr).toContain("APM_DISK_FLOOR");
    expect(run.stderr).toContain(WHAT_TO_DO);
    expect(existsSync(join(data, "pgdata"))).toBe(false);
    expect(sandbox.requestLog.length).toBe(0);
  }, 180_000);

  // A file system of its own that can be made larger: a tmpfs, which needs the right to mount.
  const mountPoint = join(tmpdir(), `apm-disk-fs-${process.pid}`);
  const mounted = (() => {
    try {
      mkdirSync(mountPoint, { recursive: true });
      execFileSync("mount", ["-t", "tmpfs", "-o", "size=120m", "tmpfs", mountPoint], { stdio: "ignore" });
      return true;
    } catch {
      return false;
    }
  })();
  afterAll(() => {
    if (mounted) execFileSync("umount", [mountPoint]);
    rmSync(mountPoint, { recursive: true, force: true });
  });

  it.skipIf(!mounted)(
    "a disk that fills during a backfill: exit 1, one error a stream, what was committed kept; then the rest lands exactly",
    async () => {
      const data = join(mountPoint, "wh");
      const range = ["--from", "3d", "--to", "now", ...STREAMS];
      // The template takes about 46 MiB of the 120; the backfill writes more than the 24 left above 50.
      const full = await runCli(["backfill", ...range], env(data, 50 * MIB), { timeoutMs: 300_000 });
      expect(full.code, full.stderr).toBe(1);
      expect(full.durationMs).toBeLessThan(120_000);
      const errors = full.stderr.split("\n").filter((l) => l.includes(" ERROR "));
      // One failed window a stream of each project at most, and the run's own failure.
      expect(errors.length).toBeGreaterThanOrEqual(2);
      expect(errors.length).toBeLessThanOrEqual(5);
      expect(errors.every((l) => l.includes("APM_DISK_FLOOR") && l.includes(WHAT_TO_DO))).toBe(true);
      expect(full.stderr).not.toContain("could not record the failed window");

      execFileSync("mount", ["-o", "remount,size=400m", mountPoint]);
      const rest = await runCli(["backfill", ...range], env(data, 50 * MIB), { timeoutMs: 300_000 });
      expect(rest.code, rest.stderr).toBe(0);
      // Windows the first run committed are kept, not fetched again.
      const kept = Number(/(\d+) windows the ledger has complete were skipped/.exec(rest.stdout)?.[1] ?? 0);
      expect(kept).toBeGreaterThan(0);
      const verify = await runCli(["verify", ...range], env(data, 50 * MIB), { timeoutMs: 300_000 });
      expect(verify.code, verify.stderr).toBe(0);
      expect(verify.stdout).toMatch(/ 0 differ/);
    },
    900_000,
  );
});
