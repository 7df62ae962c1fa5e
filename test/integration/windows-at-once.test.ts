// Sixteen windows of one stream in flight at once (the default APM_WINDOW_CONCURRENCY): every
// request listens to its target's stop signal, and Node warns past 10 listeners on one signal
// ("MaxListenersExceededWarning" on stderr). Such a line breaks --log-format json, which promises
// JSON lines only. The server here holds every answer until 16 requests wait together.
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
  const answer = (req: RecordedRequest, res: ServerResponse) => {
    if (req.method !== "POST") return reply(res, 404, '{"msg":"not here"}');
    const { stime, etime } = JSON.parse(req.body || "{}") as { stime: number; etime: number };
    const data = [{ serviceHash: 1, service: "/a", count: 1, error: 0, timeSum: 1, timeMin: 1, timeMax: 1, timeAvg: 1 }];
    held.push(() => reply(res, 200, JSON.stringify({ stime, etime, data, total: 1, retrievedTotal: 1 })));
    mostAtOnce = Math.max(mostAtOnce, held.length);
    // Released together once 16 wait; after that (fewer windows left) each at once.
    if (held.length >= AT_ONCE || mostAtOnce >= AT_ONCE) {
      const go = held;
      held = [];
      for (const send of go) send();
    }
  };
  beforeAll(async () => {
    [server, db] = await Promise.all([startServer(answer), createTestDatabase()]);
  });
  afterAll(async () => {
    await server?.close();
    await db?.drop();
  });

  it("writes JSON lines only: no Node warning about listeners on stderr", async () => {
    const run = await runCli(["sync"], {
      ...cliEnv({ baseUrl: server.url, databaseUrl: db.url, projects: [{ pcode: 92, token: "at-once-token-92" }] }),
      APM_DB_SCHEMA: db.schema,
      APM_STREAMS: "stat.transaction",
      APM_START: "30h",
      APM_LOG_FORMAT: "json",
    });
    expect(run.code, run.stderr).toBe(0);
    expect(mostAtOnce).toBe(AT_ONCE);
    const lines = run.stderr.split("\n").filter((l) => l !== "");
    expect(lines.filter((l) => !l.startsWith("{"))).toEqual([]);
    for (const l of [...lines, ...run.stdout.split("\n").filter((s) => s !== "")]) expect(() => JSON.parse(l), l).not.toThrow();
    const [row] = await db.sql<{ n: number }[]>`select count(*)::int as n from stat_transaction`;
    expect(row!.n).toBeGreaterThanOrEqual(29);
  });
});
