// A job whose worker died during its last attempt (graphile-worker counts an attempt when it locks
// the job): once recovered it must run again, not lie unlocked and unrunnable while
// `worker --until-idle` exits 0 without it (issue 31 point 4: a killed worker's job silently
// lost). A job whose workers died during every one of its attempts fails for good, saying so.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CRASH_ATTEMPTS } from "../../src/queue/heartbeat.ts";
import { type Sandbox, startSandbox } from "../../src/sandbox/index.ts";
import { cliEnv, runCli } from "../support/child-sync.ts";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";
import { HOUR } from "../support/time.ts";
import { compareWithTruth } from "../support/truth-compare.ts";

const NOW = Date.UTC(2026, 1, 20);
const FROM = Date.UTC(2026, 1, 16);
const TO = FROM + 4 * HOUR;
const range = ["--from", new Date(FROM).toISOString(), "--to", new Date(TO).toISOString(), "--streams", "stat.transaction"];

describe("a job whose worker died during its last attempt", () => {
  let sandbox: Sandbox;
  beforeAll(async () => {
    sandbox = await startSandbox({ now: () => NOW, seed: 3, projects: 1, maxRecords: 200, burstKeys: 0 });
  });
  afterAll(() => sandbox?.stop());

  /** A fresh database with the backfill queued as one job, locked by a worker gone for a minute after `attempts` attempts. */
  async function queuedAndOrphaned(attempts: number): Promise<{ db: TestDatabase; env: Record<string, string> }> {
    const db = await createTestDatabase();
    const env = cliEnv({ baseUrl: sandbox.url, databaseUrl: db.url, projects: sandbox.projects, extra: { APM_WORKER_RECOVERY: "2s" } });
    const queued = await runCli(["enqueue", "backfill", ...range], env);
    expect(queued.stdout).toContain("1 job(s) added");
    await db.sql.unsafe(`
      UPDATE apm_queue._private_jobs SET attempts = ${attempts}, max_attempts = least(max_attempts, ${attempts}),
        locked_by = 'dead-worker', locked_at = now() - interval '1 minute';
      UPDATE apm_queue._private_job_queues SET locked_by = 'dead-worker', locked_at = now() - interval '1 minute'`);
    return { db, env };
  }

  it("runs again once recovered: the worker waits for it, runs it and the truth is stored exactly", async () => {
    const { db, env } = await queuedAndOrphaned(5);
    try {
      const r = await runCli(["worker", "--until-idle"], env, { timeoutMs: 90_000 });
      expect(r.code, `${r.stdout.slice(-3000)}\n${r.stderr.slice(-2000)}`).toBe(0);
      expect(r.stderr).toMatch(/its worker died during its last attempt \(5\); it gets one more/);
      const [left] = await db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM apm_queue.jobs`;
      expect(left!.n).toBe(0);
      const pcode = sandbox.projects[0]!.pcode;
      const { diff, truthKeys } = await compareWithTruth({ sql: db.sql, truth: sandbox.truth }, "stat.transaction", pcode, FROM, TO);
      expect(diff).toEqual([]);
      expect(truthKeys).toBeGreaterThan(0);
    } finally {
      await db.drop();
    }
  });

  it(`fails for good, saying why, once its workers died during ${CRASH_ATTEMPTS} attempts: the worker exits 1`, async () => {
    const { db, env } = await queuedAndOrphaned(CRASH_ATTEMPTS);
    try {
      const r = await runCli(["worker", "--until-idle"], env, { timeoutMs: 90_000 });
      expect(r.code, r.stderr.slice(-2000)).toBe(1);
      const [job] = await db.sql<
        { last_error: string | null; locked_by: string | null }[]
      >`SELECT last_error, locked_by FROM apm_queue.jobs`;
      expect(job).toEqual({
        last_error: expect.stringContaining(`its worker died during each of its last attempts (${CRASH_ATTEMPTS})`),
        locked_by: null,
      });
    } finally {
      await db.drop();
    }
  });
});
