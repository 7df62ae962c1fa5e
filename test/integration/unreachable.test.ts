// The real CLI against a server that cannot be reached (issue 19 item 1): `sync` used to retry
// every window of every stream for minutes (~1,900 WARN lines, failed windows counted as done).
// Now it stops within seconds with exit 1 and one line naming the host and what to check; the
// windows it did not fetch are left untouched (none recorded failed), the run is marked failed,
// and a later run against the reachable server fetches everything.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cliEnv, runCli } from "../support/child-sync.ts";
import { type EngineHarness, HOUR, startEngineHarness } from "../support/engine-harness.ts";
import { unusedPort } from "../support/http-server.ts";

const NOW = Math.floor(Date.now() / HOUR) * HOUR;
let h: EngineHarness;

beforeAll(async () => {
  h = await startEngineHarness({ now: NOW, projects: 2, burstKeys: 0 });
});
afterAll(async () => h?.close());

function env(baseUrl: string) {
  return cliEnv({
    baseUrl,
    databaseUrl: h.db.url,
    projects: h.sandbox.projects,
    accountToken: h.sandbox.accountToken,
    extra: { APM_START: "1d", APM_STREAMS: "stat.transaction,stat.sql,range.exception" },
  });
}

describe("sync against a server that cannot be reached", () => {
  it("stops within seconds, exit 1, one line naming the host; nothing recorded failed; the next run fetches it all", async () => {
    const port = await unusedPort();
    const exit = await runCli(["sync"], env(`http://127.0.0.1:${port}`), { timeoutMs: 60_000 });
    expect(exit.code, exit.stderr).toBe(1);
    expect(exit.durationMs).toBeLessThan(30_000);
    const cannot = exit.stderr.split("\n").filter((l) => l.includes("cannot reach"));
    expect(cannot, exit.stderr).toHaveLength(1);
    expect(cannot[0]).toContain(`http://127.0.0.1:${port}`);
    expect(cannot[0]).toContain("Check APM_BASE_URL");
    // No window recorded failed, nor any other error line.
    expect(exit.stderr.split("\n").filter((l) => l.includes(" ERROR ") && !l.includes("cannot reach"))).toEqual([]);
    expect(exit.stderr.split("\n").filter((l) => l.includes("WARN")).length).toBeLessThan(20);
    expect(exit.stdout).toContain("the server cannot be reached");
    const failed = await h.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM sync_windows WHERE status = 'failed'`;
    expect(failed[0]!.n).toBe(0);
    const [run] = await h.sql<{ status: string }[]>`SELECT status FROM sync_runs ORDER BY id DESC LIMIT 1`;
    expect(run!.status).toBe("failed");

    const again = await runCli(["sync"], env(h.sandbox.url), { timeoutMs: 120_000 });
    expect(again.code, again.stderr).toBe(0);
    const done = await h.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM sync_windows WHERE status = 'done'`;
    expect(done[0]!.n).toBeGreaterThan(0);
  }, 240_000);
});
