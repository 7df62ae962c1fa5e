// The embedded database's WAL stays bounded during a long run: a real CLI backfill writes several
// times max_wal_size of WAL while pg_wal is measured as it goes; pg_wal never holds more than the
// bound. Before, PGlite (one backend, no checkpointer) kept every segment a run wrote until it
// closed: 15 GB for a 30-day backfill of 3 projects.
import { mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase } from "../../src/db/driver/connect.ts";
import { MAX_WAL_MB } from "../../src/db/driver/embedded-wal.ts";
import { type Sandbox, startSandbox } from "../../src/sandbox/index.ts";
import { runCli, spawnCli } from "../support/child-sync.ts";
import { DAY } from "../support/engine-harness.ts";

const MB = 1024 * 1024;
const TO = Math.floor(Date.now() / DAY) * DAY;
const FROM = TO - 3 * DAY;

let sandbox: Sandbox;
let dir: string;

beforeAll(async () => {
  // The daily burst cubes (more keys than the record cap) are most of the rows, and of the WAL.
  sandbox = await startSandbox({ seed: 1, projects: 1 });
  dir = mkdtempSync(join(tmpdir(), "apm-wal-"));
});

afterAll(async () => {
  await sandbox?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** Bytes in pg_wal now (its segments; a file removed while listed counts 0). */
function walBytes(): number {
  const wal = join(dir, "pgdata", "pg_wal");
  let total = 0;
  for (const name of readdirSync(wal)) {
    try {
      const s = statSync(join(wal, name));
      if (s.isFile()) total += s.size;
    } catch {}
  }
  return total;
}

/** WAL written so far, bytes from the start of the log. */
async function walPosition(): Promise<number> {
  const db = await openDatabase({ databaseUrl: null, dataDir: dir, dbSchema: "apm" });
  try {
    const [row] = await db.sql<{ at: number }[]>`SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::float8 AS at`;
    return row!.at;
  } finally {
    await db.close();
  }
}

describe("the embedded database's WAL during a backfill", () => {
  it("stays under twice max_wal_size while the run writes more than that", async () => {
    const env = {
      APM_BASE_URL: sandbox.url,
      APM_DATA_DIR: dir,
      APM_PROJECTS: sandbox.projects.map((p) => `${p.pcode}:${p.token}`).join(","),
      APM_RPS: "1000",
      APM_LOG_FORMAT: "plain",
    };
    const migrated = await runCli(["migrate"], env, { timeoutMs: 600_000 });
    expect({ code: migrated.code }, migrated.stderr).toEqual({ code: 0 });
    const before = await walPosition();
    let peak = walBytes();
    const range = ["--from", new Date(FROM).toISOString(), "--to", new Date(TO).toISOString()];
    const run = spawnCli(["backfill", ...range, "--streams", "range,series,stat"], env, { timeoutMs: 1_500_000 });
    // Measured while it runs: the WAL a checkpoint leaves behind is recycled, not freed, so the end alone would not tell.
    const sampler = setInterval(() => {
      peak = Math.max(peak, walBytes());
    }, 100);
    const done = await run.exited.finally(() => clearInterval(sampler));
    expect({ code: done.code }, done.stderr.slice(-3000)).toEqual({ code: 0 });
    const written = (await walPosition()) - before;
    process.stderr.write(`embedded-wal: ${Math.round(written / MB)} MB of WAL written, pg_wal peaked at ${Math.round(peak / MB)} MB\n`);
    expect(written).toBeGreaterThan(2.5 * MAX_WAL_MB * MB);
    expect(peak).toBeLessThanOrEqual(2 * MAX_WAL_MB * MB);
  }, 2_000_000);
});
