// A database whose defaults are set for its other clients: DateStyle "SQL, DMY" (as a European BI
// team may want it) and serializable transactions. The driver reads times as ISO text only: under
// that style it read 01/12/2026 (the 1st of December) as January 12, the rollups' refresh took the marks of days that were not
// there, and `status` showed watermarks months off. The engine's locks and fences are built on read
// committed: under serializable, concurrent windows failed with 40001 and were retried as
// "database unavailable". apm-sync's connections ask for ISO and read committed for themselves.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { lockSessionFor } from "../../src/db/driver/lockSession.ts";
import { type Sandbox, startSandbox } from "../../src/sandbox/index.ts";
import { cliEnv, runCli } from "../support/child-sync.ts";
import { createTestDatabase, setOnDatabase, type TestDatabase } from "../support/db.ts";

describe("a database whose DateStyle is not ISO and whose transactions are serializable", () => {
  let sandbox: Sandbox;
  let db: TestDatabase;
  const range = ["--streams", "stat.sql,stat.transaction", "--from", "2026-11-01", "--to", "2026-11-03"];
  const env = () => cliEnv({ baseUrl: sandbox.url, databaseUrl: db.url, projects: sandbox.projects });

  beforeAll(async () => {
    [sandbox, db] = await Promise.all([startSandbox({ projects: 1, burstKeys: 0 }), createTestDatabase()]);
    await setOnDatabase(db.name, "DateStyle = 'SQL, DMY'", "default_transaction_isolation = 'serializable'");
  }, 60_000);

  afterAll(async () => {
    await sandbox?.stop();
    await db?.drop();
  });

  it("backfills, refreshes the rollups, reads its ledger back, and verify agrees", async () => {
    const first = await runCli(["backfill", ...range], env(), { timeoutMs: 120_000 });
    expect(first.code, first.stderr).toBe(0);
    expect(first.stderr).not.toContain("rollups not refreshed");
    expect(first.stderr).not.toContain("database unavailable");
    // The days left to the run's end (the others were refreshed along the fetch): all of them.
    expect(first.stderr).toMatch(/rollups refreshed: (\d+)\/\1 days/);
    // The ledger read back: every window of the range is complete, none fetched again.
    const again = await runCli(["backfill", ...range], env(), { timeoutMs: 120_000 });
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toContain("96 windows the ledger has complete were skipped");
    const verify = await runCli(["verify", ...range], env(), { timeoutMs: 120_000 });
    expect(verify.code, verify.stderr).toBe(0);
    expect(verify.stdout + verify.stderr).toMatch(/96 windows checked .*: 96 agree, 0 differ/);
    // The rollups hold the range's days (a day misread, the refresh took the marks of another).
    const days = await db.sql<{ day: string }[]>`
      SELECT DISTINCT to_char(bucket_start AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day FROM rollup_stat_sql_daily ORDER BY 1`;
    expect(days.map((d) => d.day)).toEqual(["2026-11-01", "2026-11-02"]);
    const status = await runCli(["status"], env(), { timeoutMs: 60_000 });
    expect(status.code, status.stderr).toBe(0);
    const line = status.stdout.split("\n").find((l) => l.trim().startsWith("stat.sql "));
    expect(line).toContain("2026-11-03 00:00Z");
  }, 300_000);

  it("every connection of apm-sync, a lock's too, reads ISO times in read committed transactions", async () => {
    const settings = "SELECT current_setting('DateStyle') AS style, current_setting('transaction_isolation') AS isolation";
    const pooled = await db.sql.begin((tx) => tx.unsafe<{ style: string; isolation: string }[]>(settings));
    const session = lockSessionFor(db.sql);
    try {
      const own = await session.sql.begin((tx) => tx.unsafe<{ style: string; isolation: string }[]>(settings));
      for (const [row] of [pooled, own]) {
        expect(row!.style).toMatch(/^ISO, /);
        expect(row!.isolation).toBe("read committed");
      }
    } finally {
      session.release(true);
    }
  });
});
