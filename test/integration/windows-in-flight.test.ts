// A window that brings the process down is not retried blindly (issue 31 item 3): a window in
// flight at two crashes in a row (kill -9 of the real CLI while its answer is awaited) is no
// longer fetched by sync, which records it failed saying what to do and finishes every other
// window; `reset` of that window lets the next sync fetch it again.
import type { ServerResponse } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cliEnv, runCli, spawnCli, waitUntil } from "../support/child-sync.ts";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";
import { type RecordedRequest, reply, startServer, type TestServer } from "../support/http-server.ts";

const PCODE = 91;
const TOKEN = "in-flight-token-91";

describe("a window in flight at two crashes", () => {
  let server: TestServer;
  let db: TestDatabase;
  /** The window the server never answers while `hang` is set: the first one asked for. */
  let hung: number | null = null;
  let hang = true;
  const asked: number[] = [];
  const answer = (req: RecordedRequest, res: ServerResponse) => {
    // The clock probe (a GET of the base URL) and anything else but the statistics.
    if (req.method !== "POST") return reply(res, 404, '{"msg":"not here"}');
    const { stime, etime } = JSON.parse(req.body || "{}") as { stime: number; etime: number };
    asked.push(stime);
    hung ??= stime;
    if (hang && stime === hung) return; // never answered: the window stays in flight
    const data = [{ serviceHash: 1, service: "/a", count: 1, error: 0, timeSum: 1, timeMin: 1, timeMax: 1, timeAvg: 1 }];
    reply(res, 200, JSON.stringify({ stime, etime, data, total: 1, retrievedTotal: 1 }));
  };
  beforeAll(async () => {
    [server, db] = await Promise.all([startServer(answer), createTestDatabase()]);
  });
  afterAll(async () => {
    await server?.close();
    await db?.drop();
  });

  // A fixed start, not "4h": a run begun after the next hour struck would plan from an hour later,
  // never ask for the hung window (the oldest), and end before it could be killed.
  const start = new Date(Math.floor(Date.now() / 3_600_000) * 3_600_000 - 4 * 3_600_000).toISOString();
  const env = () => ({
    ...cliEnv({ baseUrl: server.url, databaseUrl: db.url, projects: [{ pcode: PCODE, token: TOKEN }] }),
    APM_DB_SCHEMA: db.schema,
    APM_STREAMS: "stat.transaction",
    APM_START: start,
    // One window at a time: the hung one is the only one in flight when the process dies.
    APM_WINDOW_CONCURRENCY: "1",
    APM_TIMEOUT: "10m",
  });
  /** Runs a sync and kills it (SIGKILL) while the hung window's request is awaited. */
  const crash = async () => {
    const before = asked.length;
    const run = spawnCli(["sync"], env());
    expect(await waitUntil(run, () => asked.slice(before).includes(hung ?? Number.NaN))).toBe("ready");
    // Noted in flight (it is by the time an answer could bring the process down: the note leaves
    // with the request, the answer takes longer to come).
    for (let i = 0; i < 400; i++) {
      const [row] = await db.sql<{ n: number }[]>`select count(*)::int as n from sync_attempts where run_id is not null`;
      if (row!.n > 0) break;
      await new Promise((r) => setTimeout(r, 25));
    }
    await run.kill("SIGKILL");
    // The server drops a dead client's connections (and its locks) a moment later.
    for (let i = 0; i < 200; i++) {
      const [row] = await db.sql<{ n: number }[]>`
        select count(*)::int as n from pg_stat_activity where datname = current_database() and application_name = 'apm-sync'`;
      if (row!.n === 0) break;
      await new Promise((r) => setTimeout(r, 50));
    }
  };

  it("is skipped by the next sync, which does every other window; reset lets it be fetched again", async () => {
    await crash();
    await crash();
    const before = asked.length;
    const third = await runCli(["sync"], env());
    expect(third.code, third.stderr).toBe(1);
    expect(asked.slice(before)).not.toContain(hung);
    expect(asked.length - before).toBeGreaterThan(2);
    expect(third.stderr).toMatch(/in flight each of the last 2 times the process stopped without finishing/);
    expect(third.stderr).toContain("apm-sync backfill --streams stat.transaction --projects 91 --from");
    const [failed] = await db.sql<{ n: number; start: Date }[]>`
      select count(*)::int as n, min(window_start) as start from sync_windows where status = 'failed'`;
    expect(failed).toMatchObject({ n: 1, start: new Date(hung!) });
    const runs = await db.sql<{ status: string }[]>`select status from sync_runs order by id`;
    expect(runs.map((r) => r.status)).toEqual(["interrupted", "interrupted", "partial"]);
    // Reset it; the server answers it now: the next sync fetches it and ends complete.
    hang = false;
    const [from, to] = [new Date(hung!).toISOString(), new Date(hung! + 3_600_000).toISOString()];
    const reset = await runCli(["reset", "--streams", "stat.transaction", "--projects", String(PCODE), "--from", from, "--to", to], env());
    expect(reset.code, reset.stderr).toBe(0);
    const fourth = await runCli(["sync"], env());
    expect(fourth.code, fourth.stderr).toBe(0);
    const left = await db.sql`select 1 from sync_windows where status <> 'done' union all select 1 from sync_attempts`;
    expect(left).toHaveLength(0);
  }, 300_000);
});
