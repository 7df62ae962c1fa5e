// Sixteen windows of one stream in flight at once (the default APM_WINDOW_CONCURRENCY): every
// request listens to its target's stop signal, and Node warns past 10 listeners on one signal
// ("MaxListenersExceededWarning" on stderr). Such a line breaks --log-format json, which promises
// JSON lines only. The server here holds every answer until 16 requests wait together. And any
// other warning of Node's during a command is a JSON record too.
import type { ServerResponse } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cliEnv, runCli } from "../support/child-sync.ts";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";
import { type RecordedRequest, reply, startServer, type TestServer } from "../support/http-server.ts";

const AT_ONCE = 16;

describe("16 windows of a stream in flight at once", () => {
  let server: TestServer;
  let db: TestDatabase;
  let held: (() => void)[] = [];
  let mostAtOnce = 0;
  /** Releases what is held: once 16 wait, or after 5 s (fewer in flight then fails the check, not the test's timeout). */
  let fallback: NodeJS.Timeout | undefined;
  const release = () => {
    clearTimeout(fallback);
    const go = held;
    held = [];
    for (const send of go) send();
  };
  const answer = (req: RecordedRequest, res: ServerResponse) => {
    if (req.method !== "POST") return reply(res, 404, '{"msg":"not here"}');
    const { stime, etime } = JSON.parse(req.body || "{}") as { stime: number; etime: number };
    const data = [{ serviceHash: 1, service: "/a", count: 1, error: 0, timeSum: 1, timeMin: 1, timeMax: 1, timeAvg: 1 }];
    held.push(() => reply(res, 200, JSON.stringify({ stime, etime, data, total: 1, retrievedTotal: 1 })));
    mostAtOnce = Math.max(mostAtOnce, held.length);
    // Once 16 have waited together, every later answer goes at once (fewer windows are left).
    if (mostAtOnce >= AT_ONCE) release();
    else if (held.length === 1) fallback = setTimeout(release, 5_000);
  };
  beforeAll(async () => {
    [server, db] = await Promise.all([startServer(answer), createTestDatabase()]);
  });
  afterAll(async () => {
    release();
    await server?.close();
    await db?.drop();
  });

  const env = (extra: Record<string, string> = {}) => ({
    ...cliEnv({ baseUrl: server.url, databaseUrl: db.url, projects: [{ pcode: 92, token: "at-once-token-92" }] }),
    APM_DB_SCHEMA: db.schema,
    APM_STREAMS: "stat.transaction",
    APM_START: "30h",
    APM_LOG_FORMAT: "json",
    ...extra,
  });
  /** Every line of stderr parsed: a line that is not JSON fails the test, naming it. */
  const records = (stderr: string) =>
    stderr
      .split("\n")
      .filter((l) => l !== "")
      .map((l) => {
        expect(l.startsWith("{"), l).toBe(true);
        return JSON.parse(l) as Record<string, unknown>;
      });

  it("writes JSON lines only: no Node warning about listeners on stderr", async () => {
    const run = await runCli(["sync"], env());
    expect(run.code, run.stderr).toBe(0);
    expect(mostAtOnce).toBe(AT_ONCE);
    expect(records(run.stderr).filter((r) => JSON.stringify(r).includes("MaxListeners"))).toEqual([]);
    for (const l of run.stdout.split("\n").filter((s) => s !== "")) expect(() => JSON.parse(l), l).not.toThrow();
    const [row] = await db.sql<{ n: number }[]>`select count(*)::int as n from stat_transaction`;
    expect(row!.n).toBeGreaterThanOrEqual(29);
  });

  it("logs a warning of Node's during the command as a JSON record", async () => {
    // Emitted once the command's logger has taken the warnings (its listener is named logWarning).
    const probe =
      "const t=setInterval(()=>{if(process.listeners('warning').some(l=>l.name==='logWarning')){clearInterval(t);process.emitWarning('probe','ProbeWarning')}},1);t.unref()";
    const run = await runCli(["sync"], env({ NODE_OPTIONS: `--import=data:text/javascript,${encodeURIComponent(probe)}` }));
    expect(run.code, run.stderr).toBe(0);
    expect(records(run.stderr)).toContainEqual(expect.objectContaining({ level: 40, warning: "ProbeWarning", msg: "probe" }));
  });
});
