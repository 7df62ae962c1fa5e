// Scale-out on the job queue: `enqueue backfill` twice adds nothing the second time; three
// `worker --until-idle` processes share the jobs, one is killed with -9 in the middle, and the
// survivors run its job again after APM_WORKER_RECOVERY and exit 0 with the ground truth exactly;
// an audit of every ledger write shows no window written by two workers at once. And a schedule
// tick runs one sync with three workers running.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ChildRun, cliEnv, runCli, spawnCli } from "../support/child-sync.ts";
import { compareWithTruth, DAY, type EngineHarness, ledgerRows, ledgerViolations, startEngineHarness } from "../support/engine-harness.ts";

const NOW = Date.UTC(2026, 1, 20);
const FROM = Date.UTC(2026, 1, 15);
const TO = FROM + 3 * DAY;
const STREAMS = ["stat.transaction", "stat.sql", "range.sql", "range.exception"];
const range = ["--from", new Date(FROM).toISOString(), "--to", new Date(TO).toISOString(), "--streams", STREAMS.join(",")];

/** Every committed ledger write, stamped at commit (a deferred trigger), with its transaction's start. */
async function installWriteAudit(h: EngineHarness): Promise<void> {
  await h.sql.unsafe(`
    CREATE TABLE write_audit (stream text, pcode bigint, part text, window_start timestamptz, pid int, xact_start timestamptz, committed timestamptz);
    CREATE FUNCTION audit_write() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
      INSERT INTO write_audit VALUES (NEW.stream, NEW.pcode, NEW.partition, NEW.window_start, pg_backend_pid(), transaction_timestamp(), clock_timestamp());
      RETURN NULL; END $$;
    CREATE CONSTRAINT TRIGGER audit_write AFTER INSERT OR UPDATE ON sync_windows DEFERRABLE INITIALLY DEFERRED
      FOR EACH ROW EXECUTE FUNCTION audit_write();`);
}

describe("workers on the job queue", () => {
  let h: EngineHarness;
  let env: Record<string, string>;
  beforeAll(async () => {
    h = await startEngineHarness({ now: NOW, maxRecords: 300, burstKeys: 0, projects: 2 });
    await installWriteAudit(h);
    env = cliEnv({
      baseUrl: h.sandbox.url,
      databaseUrl: h.db.url,
      projects: h.sandbox.projects,
      extra: { APM_RPS: "80", APM_WORKER_RECOVERY: "3s" },
    });
  });
  afterAll(() => h?.close());

  it("the embedded database has no queue: enqueue and worker say so and exit 2", async () => {
    const { DATABASE_URL: _, ...embedded } = env;
    for (const args of [
      ["worker", "--until-idle"],
      ["enqueue", "sync"],
    ]) {
      const r = await runCli(args, { ...embedded, APM_DATA_DIR: "/nonexistent/apm-sync-test" });
      expect({ code: r.code, err: r.stderr }).toEqual({ code: 2, err: expect.stringContaining("the job queue needs a Postgres server") });
    }
  });

  it("enqueueing the same backfill twice adds no job the second time", async () => {
    const first = await runCli(["enqueue", "backfill", ...range], env);
    expect(first.code, first.stderr).toBe(0);
    // 4 streams x 2 projects x 3 days.
    expect(first.stdout).toContain("enqueue backfill: 24 job(s) added, 0 already queued");
    const again = await runCli(["enqueue", "backfill", ...range], env);
    expect(again.stdout).toContain("enqueue backfill: 0 job(s) added, 24 already queued");
  });

  it("three workers, one killed with -9: the survivors finish, exit 0, the ground truth exactly, no window written by two at once", async () => {
    const workers: ChildRun[] = [0, 1, 2].map(() =>
      spawnCli(["worker", "--until-idle", "--concurrency", "2"], env, { timeoutMs: 180_000 }),
    );
    // Kill a worker that holds a job, in the middle of the backfill.
    let victim: ChildRun | undefined;
    for (let i = 0; i < 600 && !victim; i++) {
      await new Promise((r) => setTimeout(r, 100));
      if ((await ledgerRows(h.sql)).length < 60) continue;
      const holders = await h.sql<{ pid: number }[]>`SELECT DISTINCT w.pid FROM apm_queue.jobs j
        JOIN worker_heartbeats w ON w.worker_id = j.locked_by WHERE j.locked_by IS NOT NULL`;
      victim = workers.find((w) => holders.some((x) => x.pid === w.pid));
    }
    expect(victim).toBeDefined();
    const killed = await victim!.kill("SIGKILL");
    expect(killed.signal).toBe("SIGKILL");
    const survivors = await Promise.all(workers.filter((w) => w !== victim).map((w) => w.exited));
    for (const s of survivors) expect(s.code, s.stderr.slice(-3000)).toBe(0);
    const recovered = survivors.map((s) => s.stderr).join("\n");
    expect(recovered).toMatch(/unlocked the jobs of 1 worker\(s\) not seen for 3 s/);

    expect(await ledgerViolations(h.sql, STREAMS, FROM)).toEqual([]);
    expect((await ledgerRows(h.sql)).filter((l) => l.status === "failed")).toEqual([]);
    for (const pcode of h.pcodes)
      for (const op of STREAMS) {
        const { diff, truthKeys } = await compareWithTruth(h, op, pcode, FROM, TO);
        expect({ op, pcode, diff }).toEqual({ op, pcode, diff: [] });
        expect(truthKeys).toBeGreaterThan(0);
      }
    // Two transactions of different backends that wrote the same window never overlapped in time.
    const overlaps = await h.sql`SELECT a.stream, a.pcode, a.window_start FROM write_audit a JOIN write_audit b
      ON a.stream = b.stream AND a.pcode = b.pcode AND a.part = b.part AND a.window_start = b.window_start AND a.pid <> b.pid
      AND a.xact_start < b.committed AND b.xact_start < a.committed`;
    expect(overlaps).toEqual([]);
    // The audit saw the writes of several workers (the check above compares something).
    const [audit] = await h.sql<
      { n: number; pids: number }[]
    >`SELECT count(*)::int AS n, count(DISTINCT pid)::int AS pids FROM write_audit`;
    expect(audit!.n).toBeGreaterThanOrEqual(24 * 24);
    expect(audit!.pids).toBeGreaterThan(1);
    // Nothing is left in the queue; enqueueing the same range now finds every chunk complete.
    const after = await runCli(["enqueue", "backfill", ...range], env);
    expect(after.stdout).toContain("0 job(s) added, 0 already queued, 24 chunk(s) complete in the ledger");
  });

  it("a schedule tick runs one sync and prunes at its end with three workers running; SIGTERM stops them (143)", async () => {
    const scheduled = {
      ...env,
      APM_SCHEDULE: "* * * * *",
      // The backfill above wrote range.exception in February 2026, long before 30 days ago.
      APM_RETENTION: "range.exception=30d",
      APM_START: new Date(NOW - 2 * 3_600_000).toISOString(),
      APM_STREAMS: "stat.transaction",
    };
    const workers = [0, 1, 2].map(() => spawnCli(["worker", "--concurrency", "2"], scheduled, { timeoutMs: 150_000 }));
    let ticks: { tick: string }[] = [];
    // The tick's run row is written before it queues its sync jobs, and finished after: wait for
    // the finish, or the queue below may be looked at before the jobs are in it.
    for (let i = 0; i < 90 && ticks.length === 0; i++) {
      await new Promise((r) => setTimeout(r, 1_000));
      ticks = await h.sql<
        { tick: string }[]
      >`SELECT args->>'tick' AS tick FROM sync_runs WHERE command = 'schedule' AND finished_at IS NOT NULL`;
    }
    expect(ticks.length).toBe(1);
    // The sync jobs of that tick run; give every worker time to have seen the tick too.
    for (let i = 0; i < 60; i++) {
      const [q] = await h.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM apm_queue.jobs WHERE key LIKE 'sync:%'`;
      if (q?.n === 0) break;
      await new Promise((r) => setTimeout(r, 500));
    }
    const [jobs] = await h.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM apm_queue.jobs WHERE key LIKE 'sync:%'`;
    expect(jobs?.n).toBe(0);
    const synced = await ledgerRows(h.sql, { stream: "stat.transaction" });
    expect(synced.filter((l) => l.start >= NOW - 2 * 3_600_000).length).toBeGreaterThan(0);
    const again = await h.sql<
      { tick: string }[]
    >`SELECT args->>'tick' AS tick FROM sync_runs WHERE command = 'schedule' AND args->>'tick' = ${ticks[0]!.tick}`;
    expect(again.length).toBe(1);
    const exits = await Promise.all(workers.map((w) => w.kill("SIGTERM")));
    for (const e of exits) expect(e.code, e.stderr.slice(-2000)).toBe(143);
    // The worker that ran the tick pruned, once; the other tables are untouched.
    const pruned = exits.flatMap(
      (e) => `${e.stdout}\n${e.stderr}`.match(/prune: range_exceptions: dropped 1 partition\(s\) \(2026-02\.\.2026-02\)/g) ?? [],
    );
    expect(pruned).toHaveLength(1);
    const [left] = await h.sql<{ rows: number; kept: number }[]>`
      SELECT (SELECT count(*)::int FROM range_exceptions) AS rows, (SELECT count(*)::int FROM range_sql) AS kept`;
    expect(left).toEqual({ rows: 0, kept: expect.any(Number) });
    expect(left!.kept).toBeGreaterThan(0);
    expect(new Set((await ledgerRows(h.sql, { stream: "range.exception" })).map((l) => l.status))).toEqual(new Set(["pruned"]));
  });
});
