// apm-sync behind a connection pooler (PgBouncer, as managed Postgres services put in front of
// their servers). A pooler refuses startup parameters it does not know: apm-sync's schema, its
// isolation level and idle_session_timeout were startup parameters, and every command failed to
// connect ("unsupported startup parameter: search_path"), retried as an outage for a minute. They
// are now set by each connection's first statement. In session mode each connection keeps its
// server session, and a backfill stores what the server serves. In transaction mode sessions are
// shared, and apm-sync's session locks would be held by whichever client has the session next:
// refused before anything is written, saying what to use. Skipped without the pgbouncer binary
// (`.ci/run` installs Debian's).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase } from "../../src/db/driver/connect.ts";
import { lockSessionFor } from "../../src/db/driver/lockSession.ts";
import { type Sandbox, startSandbox } from "../../src/sandbox/index.ts";
import { cliEnv, runCli } from "../support/child-sync.ts";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";
import { type PgBouncer, pgbouncerBinary, startPgBouncer } from "../support/pgbouncer.ts";

const binary = pgbouncerBinary();
if (!binary) process.stderr.write("pgbouncer.test.ts: no pgbouncer binary (Debian: apt-get install pgbouncer); skipped\n");

const STREAMS = ["--streams", "stat.sql,stat.transaction"];
const RANGE = ["--from", "4h", "--to", "now"];

describe.skipIf(!binary)("behind PgBouncer", () => {
  let sandbox: Sandbox;
  let db: TestDatabase;
  let pooler: PgBouncer;
  const env = (databaseUrl: string) => ({
    ...cliEnv({ baseUrl: sandbox.url, databaseUrl, projects: sandbox.projects }),
    APM_CONCURRENCY: "4",
  });
  const ledger = async () =>
    (
      await db.sql<{ windows: number; done: number; runs: number }[]>`
      SELECT count(*)::int AS windows, count(*) FILTER (WHERE status = 'done')::int AS done,
        (SELECT count(*)::int FROM sync_runs) AS runs FROM sync_windows`
    )[0]!;

  beforeAll(async () => {
    [sandbox, db] = await Promise.all([startSandbox({ projects: 2, burstKeys: 0 }), createTestDatabase()]);
    pooler = await startPgBouncer(binary!, db.url);
  }, 60_000);

  afterAll(async () => {
    await pooler?.stop();
    await sandbox?.stop();
    await db?.drop();
  });

  it("refuses a pool in transaction mode before anything is written: exit 2, saying what to use", async () => {
    const run = await runCli(["backfill", ...STREAMS, ...RANGE], env(pooler.url("transaction")), { timeoutMs: 60_000 });
    expect(run.code, run.stderr).toBe(2);
    expect(run.stderr).toContain("share server sessions");
    expect(run.stderr).toContain("pool_mode = session");
    expect(await ledger()).toEqual({ windows: 0, done: 0, runs: 0 });
  }, 90_000);

  it("says at once what a startup parameter the pooler refuses is, without a minute of retries", async () => {
    const started = Date.now();
    const run = await runCli(["status"], env(`${pooler.url("session")}?statement_timeout=0`), { timeoutMs: 60_000 });
    expect(run.code, run.stderr).toBe(2);
    expect(run.stderr).toContain("unsupported startup parameter: statement_timeout");
    expect(run.stderr).toContain("ALTER ROLE");
    expect(Date.now() - started).toBeLessThan(30_000);
  }, 90_000);

  it("through a pool in session mode: each connection's settings hold, and a backfill stores what the server serves", async () => {
    const opened = await openDatabase({ databaseUrl: pooler.url("session"), dataDir: "", dbSchema: "apm" });
    try {
      const lock = lockSessionFor(opened.sql);
      const read =
        "SELECT current_setting('search_path') AS path, current_setting('transaction_isolation') AS iso, current_setting('idle_session_timeout') AS idle";
      const [pooled] = await opened.sql.unsafe(read);
      const [locks] = await lock.sql.unsafe(read);
      lock.release(true);
      const want = { path: "apm", iso: "read committed", idle: "0" };
      expect({ pooled, locks }).toEqual({ pooled: want, locks: want });
    } finally {
      await opened.close();
    }
    const run = await runCli(["backfill", ...STREAMS, ...RANGE], env(pooler.url("session")), { timeoutMs: 120_000 });
    expect(run.code, run.stderr).toBe(0);
    const after = await ledger();
    expect(after.windows).toBeGreaterThanOrEqual(2 * 2 * 4);
    expect(after.done).toBe(after.windows);
    // Checked directly against the server, not through the pooler.
    const verify = await runCli(["verify", ...STREAMS, ...RANGE], env(db.url), { timeoutMs: 120_000 });
    expect(verify.code, verify.stderr).toBe(0);
    expect(verify.stdout + verify.stderr).toMatch(/ 0 differ/);
  }, 240_000);
});
