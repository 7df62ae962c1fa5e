// Dimensions refresh fully: a row missing from a complete list gets deleted_at, a row that comes
// back clears it; a list with a quarantined record is not complete, so nothing is marked.
import type { ServerResponse } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";
import { runEngine } from "../support/engine-harness.ts";
import { type RecordedRequest, reply, startServer, type TestServer } from "../support/http-server.ts";

const NOW = Date.UTC(2026, 5, 1, 12);
const project = (code: number | string, name: string) => ({
  projectCode: code,
  projectName: name,
  createTime: "2018-10-19T07:17:03.774",
  status: "subscribe",
  productType: "APM",
  platform: "JAVA",
  apiToken: "5****R",
});

describe("dimension refresh (projects list)", () => {
  let server: TestServer;
  let db: TestDatabase;
  let list: unknown[] = [];
  let lastSkipped: readonly number[] = [];
  beforeAll(async () => {
    server = await startServer((req: RecordedRequest, res: ServerResponse) => {
      if (req.url === "/open/api/json/projects")
        return reply(res, 200, JSON.stringify({ data: list, accountEmail: "a@b", total: list.length }));
      return reply(res, 404, JSON.stringify({ msg: "not here", code: 404 }));
    });
    db = await createTestDatabase();
  });
  afterAll(async () => {
    await server?.close();
    await db?.drop();
  });

  const sync = async () => {
    const r = await runEngine(
      { baseUrl: server.url, projects: [], accountToken: "acct-token-1", database: db, now: () => NOW },
      { command: "sync", mode: { kind: "sync" }, streams: ["account.projects"] },
    );
    expect(r.exitCode).toBe(0);
    // No project token is configured: every live project of the list is reported as skipped.
    lastSkipped = r.skippedProjects;
    return db.sql<{ pcode: string; name: string; deleted: boolean }[]>`
      SELECT pcode::text, project_name AS name, deleted_at IS NOT NULL AS deleted FROM projects ORDER BY projects.pcode`;
  };

  it("marks what disappeared, un-marks what came back, and never marks on an incomplete list", async () => {
    list = [project(35, "shop"), project(3000000001, "bank")];
    expect((await sync()).map((r) => ({ ...r }))).toEqual([
      { pcode: "35", name: "shop", deleted: false },
      { pcode: "3000000001", name: "bank", deleted: false },
    ]);
    expect([...lastSkipped].sort((a, b) => a - b)).toEqual([35, 3000000001]);
    list = [project(3000000001, "bank v2")];
    expect((await sync()).map((r) => ({ ...r }))).toEqual([
      { pcode: "35", name: "shop", deleted: true },
      { pcode: "3000000001", name: "bank v2", deleted: false },
    ]);
    expect(lastSkipped).toEqual([3000000001]);
    list = [project(35, "shop"), project("44,", "broken")];
    expect((await sync()).map((r) => ({ ...r }))).toEqual([
      { pcode: "35", name: "shop", deleted: false },
      // Missing from this list, but the list lost a record to quarantine: not marked.
      { pcode: "3000000001", name: "bank v2", deleted: false },
    ]);
    const [q] = await db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM quarantine WHERE stream = 'account.projects'`;
    expect(q!.n).toBe(1);
  });
});
