// A database set up for other clients may cancel apm-sync's statements by its own limits
// (statement_timeout, lock_timeout, set for a role or a database), take no writes by default, or
// give apm-sync's role no right to make its schemas. The command fails with the
// server's words and what to do, and what it names works: the limit lifted for apm-sync's
// connections alone, in DATABASE_URL. The limits are set on this test's own database only.
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADVICE } from "../../src/engine/describe-error.ts";
import { type Sandbox, startSandbox } from "../../src/sandbox/index.ts";
import { type ChildExit, cliEnv, runCli } from "../support/child-sync.ts";
import { adminSql, createTestDatabase, setOnDatabase, type TestDatabase } from "../support/db.ts";
import { holdInTransaction } from "../support/hold.ts";
import { waitFor } from "../support/wait-for.ts";

describe("a server's statement_timeout and lock_timeout", () => {
  let sandbox: Sandbox;
  let db: TestDatabase;
  const range = ["--streams", "stat.sql", "--from", "2h", "--to", "now"];
  const env = (url: string) => cliEnv({ baseUrl: sandbox.url, databaseUrl: url, projects: sandbox.projects });
  const withParam = (name: string, value: string) => {
    const url = new URL(db.url);
    url.searchParams.set(name, value);
    return url.toString();
  };
  const set = (setting: string) => setOnDatabase(db.name, setting);

  /** Holds sync_runs, which every run writes first, until `release` is called. */
  const holdRuns = () =>
    // The holder itself is not held to the database's limits.
    holdInTransaction(db.url, [
      "SET LOCAL statement_timeout = 0; SET LOCAL lock_timeout = 0",
      "LOCK TABLE apm.sync_runs IN ACCESS EXCLUSIVE MODE",
    ]);
  const windows = async () => (await db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM sync_windows`)[0]!.n;
  /** A command refused by a limit: exit 1, the server's words, the advice, and the ledger as it was. */
  const expectRefused = async (run: ChildExit, words: string, advice: string, before: number) => {
    expect(run.code, run.stderr).toBe(1);
    expect(run.stderr).toContain(words);
    expect(run.stderr).toContain(advice);
    expect(await windows()).toBe(before);
  };
  /** Whether a statement waits for the lock on sync_runs. */
  const waitsForRuns = async () =>
    (await db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM pg_locks WHERE relation = 'apm.sync_runs'::regclass AND NOT granted`)[0]!
      .n > 0;

  beforeAll(async () => {
    [sandbox, db] = await Promise.all([startSandbox({ projects: 1, burstKeys: 0 }), createTestDatabase()]);
  }, 60_000);

  afterAll(async () => {
    await sandbox?.stop();
    await db?.drop();
  });

  it("lock_timeout: exit 1 with the server's words and what to do, nothing written; with ?lock_timeout=0 the run waits and lands", async () => {
    await set("lock_timeout = '300ms'");
    const held = await holdRuns();
    let released = false;
    try {
      const refused = await runCli(["backfill", ...range], env(db.url), { timeoutMs: 60_000 });
      await expectRefused(refused, "canceling statement due to lock timeout (55P03)", ADVICE.lockTimeout, 0);
      expect(refused.stderr).not.toContain(ADVICE.statementTimeout);
      // As the advice says: the limit lifted in DATABASE_URL, for apm-sync's connections only. The
      // run waits for the lock past the database's 300 ms, then lands once it is let go.
      const waiting = runCli(["backfill", ...range], env(withParam("lock_timeout", "0")), { timeoutMs: 60_000 });
      await waitFor("the run to wait for sync_runs", waitsForRuns, 30_000);
      await new Promise((r) => setTimeout(r, 600));
      expect(await waitsForRuns()).toBe(true);
      await held.release();
      released = true;
      const landed = await waiting;
      expect(landed.code, landed.stderr).toBe(0);
      expect(await windows()).toBeGreaterThan(0);
    } finally {
      if (!released) await held.release();
      await set("lock_timeout = 0");
    }
  }, 120_000);

  it("a database read-only by default: exit 1 with what to do, nothing written; with ?default_transaction_read_only=off the run lands", async () => {
    await set("default_transaction_read_only = on");
    try {
      const before = await windows();
      const refused = await runCli(["backfill", "--refetch", ...range], env(db.url), { timeoutMs: 60_000 });
      await expectRefused(refused, "in a read-only transaction (25006)", ADVICE.readOnly, before);
      const landed = await runCli(["backfill", "--refetch", ...range], env(withParam("default_transaction_read_only", "off")), {
        timeoutMs: 60_000,
      });
      expect(landed.code, landed.stderr).toBe(0);
    } finally {
      await set("default_transaction_read_only = off");
    }
  }, 120_000);

  it("a role that may not make its schemas: exit 1 with the grant it needs; in a schema made for it, or granted, migrate and a run land; short of connections, told how many", async () => {
    const role = `apm_t_role_${db.name.slice("apm_t_".length)}`;
    const admin = adminSql();
    try {
      await admin.unsafe(`CREATE ROLE "${role}" LOGIN PASSWORD 'apm-test'`);
      const url = new URL(db.url);
      url.username = role;
      url.password = "apm-test";
      const asRole = { ...env(url.toString()), APM_DB_SCHEMA: "apm_own" };
      const refused = await runCli(["migrate"], asRole, { timeoutMs: 60_000 });
      expect(refused.code, refused.stderr).toBe(1);
      expect(refused.stderr).toContain(`permission denied for database ${db.name} (42501)`);
      expect(refused.stderr).toContain(ADVICE.privilege);
      // As the advice's other way: a schema made for the role beforehand, the role still without
      // CREATE on the database: migrate and a run land in it.
      await db.sql.unsafe(`CREATE SCHEMA apm_given AUTHORIZATION "${role}"`);
      const given = { ...asRole, APM_DB_SCHEMA: "apm_given" };
      const migratedGiven = await runCli(["migrate"], given, { timeoutMs: 60_000 });
      expect(migratedGiven.code, migratedGiven.stderr).toBe(0);
      // The job queue's schema graphile-worker can only make with CREATE on the database: left out, and said so.
      expect(migratedGiven.stdout).toContain("queue schema apm_given_queue: not made");
      const runGiven = await runCli(["backfill", ...range], given, { timeoutMs: 60_000 });
      expect(runGiven.code, runGiven.stderr).toBe(0);
      const [landed] = await db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM apm_given.stat_sql`;
      expect(landed!.n).toBeGreaterThan(0);
      // The queue's schema made for the role as well: migrate installs the queue in it, and a worker runs queued jobs.
      await db.sql.unsafe(`CREATE SCHEMA apm_given_queue AUTHORIZATION "${role}"`);
      const queueGiven = await runCli(["migrate"], given, { timeoutMs: 60_000 });
      expect(queueGiven.code, queueGiven.stderr).toBe(0);
      expect(queueGiven.stdout).toContain("queue schema apm_given_queue: ready");
      const queued = await runCli(["enqueue", "backfill", "--refetch", ...range], given, { timeoutMs: 60_000 });
      expect(queued.code, queued.stderr).toBe(0);
      expect(queued.stdout).toMatch(/enqueue backfill: [1-9]\d* job\(s\) added/);
      const worked = await runCli(["worker", "--until-idle"], given, { timeoutMs: 60_000 });
      expect(worked.code, worked.stderr).toBe(0);
      const [byWorker] = await db.sql<{ n: number }[]>`
        SELECT count(*)::int AS n FROM apm_given.sync_windows AS w JOIN apm_given.sync_runs AS r ON r.id = w.run_id
        WHERE r.command = 'worker' AND r.status = 'ok' AND w.status = 'done'`;
      expect(byWorker!.n).toBeGreaterThan(0);
      await admin.unsafe(`GRANT CREATE ON DATABASE "${db.name}" TO "${role}"`);
      const migrated = await runCli(["migrate"], asRole, { timeoutMs: 60_000 });
      expect(migrated.code, migrated.stderr).toBe(0);
      expect(migrated.stdout).toContain("queue schema apm_own_queue: ready");
      const run = await runCli(["backfill", ...range], asRole, { timeoutMs: 60_000 });
      expect(run.code, run.stderr).toBe(0);
      // Fewer connections for the role than a run of five streams opens by default: told so, and
      // what to set; set, the same run lands without ever meeting the limit.
      await admin.unsafe(`ALTER ROLE "${role}" CONNECTION LIMIT 4`);
      const streams = ["stat.sql", "stat.transaction", "stat.httpc", "stat.error", "stat.remote"];
      const backfill = ["backfill", "--refetch", "--streams", streams.join(","), "--from", "2h", "--to", "now"];
      const crowded = await runCli(backfill, { ...asRole, APM_DB_RETRY: "2s" }, { timeoutMs: 90_000 });
      expect(crowded.code, crowded.stderr).toBe(1);
      expect(crowded.stderr).toContain("(53300)");
      expect(crowded.stderr).toContain(ADVICE.connections);
      const fitted = await runCli(backfill, { ...asRole, APM_DB_CONNECTIONS: "4" }, { timeoutMs: 90_000 });
      expect(fitted.code, fitted.stderr).toBe(0);
      expect(fitted.stderr).not.toMatch(/53300|database unavailable/);
      const written = await db.sql<{ stream: string }[]>`
        SELECT DISTINCT stream FROM apm_own.sync_windows WHERE status = 'done' AND run_id = (SELECT max(id) FROM apm_own.sync_runs) ORDER BY 1`;
      expect(written.map((w) => w.stream)).toEqual([...streams].sort());
    } finally {
      // The role's objects live in this test's database: dropped with it, then the role.
      const inDb = postgres(db.url, { max: 1, onnotice: () => {} });
      await inDb.unsafe(`DROP OWNED BY "${role}"`).catch(() => {});
      await inDb.end();
      await admin.unsafe(`DROP ROLE IF EXISTS "${role}"`);
      await admin.end();
    }
  }, 180_000);

  it("a worker running 4 jobs at once, its job queue's included, opens no more connections than APM_DB_CONNECTIONS says, and lands every job", async () => {
    const streams = ["stat.sql", "stat.transaction", "stat.httpc", "stat.error", "stat.remote"];
    const queued = ["--streams", streams.join(","), "--from", "2d", "--to", "now"];
    const workerEnv = { ...env(db.url), APM_DB_CONNECTIONS: "6", APM_DB_SCHEMA: "apm_worker" };
    // The queue's pool takes 2 of them: fewer than 6 leave the warehouse less than its fewest (4), told before anything opens.
    const short = await runCli(["worker", "--until-idle"], { ...workerEnv, APM_DB_CONNECTIONS: "5" }, { timeoutMs: 60_000 });
    expect(short.code, short.stderr).toBe(2);
    expect(short.stderr).toContain(
      "APM_DB_CONNECTIONS=5 is too few for the job queue: it takes 2 of them and the warehouse needs 4; set APM_DB_CONNECTIONS to 6 or more",
    );
    const enqueued = await runCli(["enqueue", "backfill", ...queued], workerEnv, { timeoutMs: 60_000 });
    expect(enqueued.code, enqueued.stderr).toBe(0);
    expect(enqueued.stdout).toMatch(/enqueue backfill: 1[05] job\(s\) added/);
    // The worker's connections, the job queue's (graphile-worker) included: apm-sync's application_name, not this test's.
    const seen: number[] = [];
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        const [row] = await db.sql<{ n: number }[]>`
          SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = ${db.name} AND application_name = 'apm-sync' AND pid <> pg_backend_pid()`;
        seen.push(row!.n);
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
    const worker = await runCli(["worker", "--until-idle", "--concurrency", "4"], workerEnv, { timeoutMs: 120_000 }).finally(() => {
      sampling = false;
    });
    await sampler;
    expect(worker.code, worker.stderr).toBe(0);
    expect(Math.max(...seen)).toBeGreaterThan(3);
    expect(Math.max(...seen)).toBeLessThanOrEqual(6);
    const failed = await db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM apm_worker.sync_windows WHERE status <> 'done'`;
    expect(failed[0]!.n).toBe(0);
    const written = await db.sql<{ stream: string }[]>`SELECT DISTINCT stream FROM apm_worker.sync_windows ORDER BY 1`;
    expect(written.map((w) => w.stream)).toEqual([...streams].sort());
  }, 180_000);

  it("statement_timeout: exit 1 with the server's words and what to do", async () => {
    await set("statement_timeout = '300ms'");
    const held = await holdRuns();
    try {
      const before = await windows();
      const cancelled = await runCli(["backfill", "--refetch", ...range], env(db.url), { timeoutMs: 60_000 });
      await expectRefused(cancelled, "canceling statement due to statement timeout (57014)", ADVICE.statementTimeout, before);
    } finally {
      await held.release();
      await set("statement_timeout = 0");
    }
  }, 120_000);
});
