// A server that ends idle sessions (idle_session_timeout, Postgres 14): a stream's lock lives on a
// connection of its own, idle by design while the stream's requests are under way. Ended at every
// such pause, it took the lock with it: every window's write found it gone ("database unavailable
// (LOCK_MOVED)") and took it again, and a second run could take it meanwhile. The lock's connection
// is kept from the timeout, and so are the pool's: one the server ended while idle failed the write
// that took it at that instant ("database unavailable (ECONNRESET)", one run in five); the pool
// closes its idle connections itself.
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase } from "../../src/db/driver/connect.ts";
import { lockSessionFor } from "../../src/db/driver/lockSession.ts";
import { type Sandbox, startSandbox } from "../../src/sandbox/index.ts";
import { cliEnv, runCli } from "../support/child-sync.ts";
import { createTestDatabase, setOnDatabase, type TestDatabase } from "../support/db.ts";

describe("a server's idle_session_timeout", () => {
  let sandbox: Sandbox;
  let db: TestDatabase;

  beforeAll(async () => {
    // Each request takes 400 ms: the locks' connections sit idle longer than the timeout.
    [sandbox, db] = await Promise.all([startSandbox({ projects: 2, burstKeys: 0, latencyMs: [400, 400] }), createTestDatabase()]);
    await setOnDatabase(db.name, "idle_session_timeout = '250ms'");
  }, 60_000);

  afterAll(async () => {
    await sandbox?.stop();
    await db?.drop();
  });

  it("does not end a stream lock's connection: the lock is held all along, and the run writes each window once", async () => {
    const env = { ...cliEnv({ baseUrl: sandbox.url, databaseUrl: db.url, projects: sandbox.projects }), APM_CONCURRENCY: "2" };
    const run = await runCli(["backfill", "--streams", "stat.sql,stat.transaction", "--from", "4h", "--to", "now"], env, {
      timeoutMs: 120_000,
    });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).not.toContain("LOCK_MOVED");
    expect(run.stderr).not.toContain("database unavailable");
    const [ledger] = await db.sql<{ windows: number; done: number }[]>`
      SELECT count(*)::int AS windows, count(*) FILTER (WHERE status = 'done')::int AS done FROM sync_windows`;
    expect(ledger!.windows).toBeGreaterThanOrEqual(2 * 2 * 4);
    expect(ledger!.done).toBe(ledger!.windows);
    const verify = await runCli(["verify", "--streams", "stat.sql,stat.transaction", "--from", "4h", "--to", "now"], env, {
      timeoutMs: 120_000,
    });
    expect(verify.code, verify.stderr).toBe(0);
    expect(verify.stdout + verify.stderr).toMatch(/ 0 differ/);
  }, 180_000);

  it("apm-sync's connections say so themselves; the pool closes its idle ones itself; others keep the server's timeout", async () => {
    const opened = await openDatabase({ databaseUrl: db.url, dataDir: "", dbSchema: "apm" });
    const other = postgres(db.url, { max: 1, onnotice: () => {} });
    try {
      const session = lockSessionFor(opened.sql);
      const [own] = await session.sql<{ t: string }[]>`SELECT current_setting('idle_session_timeout') AS t`;
      const [pooled] = await opened.sql<{ t: string }[]>`SELECT current_setting('idle_session_timeout') AS t`;
      const [others] = await other<{ t: string }[]>`SELECT current_setting('idle_session_timeout') AS t`;
      session.release(true);
      expect({ own: own!.t, pooled: pooled!.t, others: others!.t }).toEqual({ own: "0", pooled: "0", others: "250ms" });
      expect(opened.sql.options.idle_timeout).toBeGreaterThan(0);
      expect(session.sql.options.idle_timeout ?? 0).toBe(0);
    } finally {
      await other.end();
      await opened.close();
    }
  });
});
