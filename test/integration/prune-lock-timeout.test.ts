// `prune` against a table a query holds: DROP waits for the query at most its lock timeout (10 s),
// then gives the table up with nothing of it changed (no partition dropped, no window marked
// pruned), says so, and exits 1; the next prune, the query gone, drops it.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cliEnv, runCli } from "../support/child-sync.ts";
import { DAY, type EngineHarness, startEngineHarness } from "../support/engine-harness.ts";
import { holdInTransaction } from "../support/hold.ts";

// Months before the real clock, which the CLI's prune reads: the month of these rows is due.
const NOW = Date.UTC(2026, 1, 20);
const STREAM = "stat.transaction";

describe("prune and a query that holds its table", () => {
  let h: EngineHarness;
  let env: Record<string, string>;
  beforeAll(async () => {
    h = await startEngineHarness({ now: NOW, projects: 1, burstKeys: 0 });
    const run = await h.run({ command: "backfill", mode: { kind: "backfill", from: NOW - DAY, to: NOW }, streams: [STREAM] });
    expect([...run.streams.values()][0]!.rows).toBeGreaterThan(0);
    env = cliEnv({
      baseUrl: h.sandbox.url,
      databaseUrl: h.db.url,
      projects: h.sandbox.projects,
      extra: { APM_RETENTION: `${STREAM}=30d` },
    });
  }, 120_000);
  afterAll(() => h?.close());

  const state = async () => {
    const [r] = await h.sql<{ partitions: number; rows: number; pruned: number }[]>`
      SELECT (SELECT count(*)::int FROM pg_inherits WHERE inhparent = 'stat_transaction'::regclass) AS partitions,
        (SELECT count(*)::int FROM stat_transaction) AS rows,
        (SELECT count(*)::int FROM sync_windows WHERE stream = ${STREAM} AND status = 'pruned') AS pruned`;
    return r!;
  };

  it("gives the table up after the lock timeout with nothing changed, exit 1; prunes it once the query is gone", async () => {
    const before = await state();
    expect(before.partitions).toBe(1);
    expect(before.pruned).toBe(0);
    // A reader's open transaction: its lock on the table (ACCESS SHARE) stays until it ends.
    const reader = await holdInTransaction(h.db.url, ["SELECT count(*) FROM apm.stat_transaction"]);
    try {
      const t0 = Date.now();
      const refused = await runCli(["prune"], env, { timeoutMs: 60_000 });
      expect(refused.code, refused.stderr).toBe(1);
      expect(refused.stdout + refused.stderr).toContain("a query or write held the table past the lock timeout; prune again later");
      // It waited for the reader (the 10 s lock timeout), then changed nothing of the table.
      expect(Date.now() - t0).toBeGreaterThanOrEqual(10_000);
      expect(await state()).toEqual(before);
    } finally {
      await reader.release();
    }
    const pruned = await runCli(["prune"], env, { timeoutMs: 60_000 });
    expect(pruned.code, pruned.stderr).toBe(0);
    const after = await state();
    expect(after.partitions).toBe(0);
    expect(after.rows).toBe(0);
    expect(after.pruned).toBeGreaterThan(0);
  }, 120_000);
});
