// A first run from years back (issue 38.1), through the CLI as the README runs it: `APM_START=
// 2020-01-01 sync` of every default stream of 2 sandbox projects into Postgres starts writing
// windows within seconds (its plan is read lazily, never held), stops on SIGTERM within the grace
// with its windows kept, in a peak RSS under 256 MiB, and the next run goes on from there.
// The 90-second version, on both databases, is `npm run bench:long-history`.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cliMemoryFlags } from "../../jobs/cli-flags.ts";
import { readPeaks } from "../../jobs/peak-rss-lines.ts";
import { type Sandbox, startSandbox } from "../../src/sandbox/index.ts";
import { cliEnv, spawnCli } from "../support/child-sync.ts";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";

const PRELOAD = fileURLToPath(new URL("../../jobs/peak-rss.mjs", import.meta.url));
const LIMIT_KIB = 256 * 1024;

let sandbox: Sandbox;
let db: TestDatabase;
let dir: string;

beforeAll(async () => {
  [sandbox, db] = await Promise.all([startSandbox({ now: Date.now, projects: 2, burstKeys: 50 }), createTestDatabase()]);
  dir = mkdtempSync(join(tmpdir(), "apm-long-history-"));
});

afterAll(async () => {
  await sandbox?.stop();
  await db?.drop();
  rmSync(dir, { recursive: true, force: true });
});

const doneWindows = async () => (await db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM sync_windows WHERE status = 'done'`)[0]!.n;

/** A sync from 2020 stopped by SIGTERM once it has written `windows` more windows; its exit and peak RSS. */
async function syncUntil(windows: number, rssFile: string) {
  const env = {
    ...cliEnv({ baseUrl: sandbox.url, databaseUrl: db.url, projects: sandbox.projects }),
    APM_DB_SCHEMA: db.schema,
    APM_START: "2020-01-01",
    APM_SHUTDOWN_GRACE: "10s",
    // As `npm run cli` runs it: with its memory flags.
    NODE_OPTIONS: `${cliMemoryFlags().join(" ")} --import ${PRELOAD}`,
    PEAK_RSS_FILE: rssFile,
  };
  const before = await doneWindows();
  const run = spawnCli(["sync"], env, { timeoutMs: 180_000 });
  const started = performance.now();
  while ((await doneWindows()) - before < windows && performance.now() - started < 150_000) await new Promise((r) => setTimeout(r, 250));
  const firstWrites = performance.now() - started;
  const signalled = performance.now();
  const exit = await run.kill("SIGTERM");
  const kib = readPeaks(rssFile).at(-1)!.kib;
  const result = {
    firstWrites: Math.round(firstWrites),
    stopMs: Math.round(performance.now() - signalled),
    kib,
    added: (await doneWindows()) - before,
  };
  process.stderr.write(`long-history: ${JSON.stringify(result)}\n`);
  return { ...result, exit };
}

describe("APM_START=2020-01-01 sync", () => {
  it("writes windows at once, stops on SIGTERM with them kept, bounded; the next run adds more", async () => {
    const first = await syncUntil(300, join(dir, "rss-1.txt"));
    expect(first.exit.code, first.exit.stderr.slice(-2000)).toBe(143);
    expect(first.added).toBeGreaterThanOrEqual(300);
    // Within the grace (10 s) and a margin for a loaded machine; the old planner held 1.5 M windows and never got here.
    expect(first.stopMs).toBeLessThan(30_000);
    expect(first.kib).toBeLessThan(LIMIT_KIB);
    expect(first.exit.stderr).not.toMatch(/heap out of memory|FATAL ERROR/);

    const second = await syncUntil(100, join(dir, "rss-2.txt"));
    expect(second.exit.code, second.exit.stderr.slice(-2000)).toBe(143);
    expect(second.added).toBeGreaterThanOrEqual(100);
    expect(second.kib).toBeLessThan(LIMIT_KIB);
    // Its windows come after the first run's: nothing was fetched twice but the lookback.
    const twice = await db.sql<{ n: number }[]>`
      SELECT count(*)::int AS n FROM (SELECT stream, pcode, window_start FROM sync_windows GROUP BY 1, 2, 3 HAVING count(*) > 1) x`;
    expect(twice[0]!.n).toBe(0);
  });
});
