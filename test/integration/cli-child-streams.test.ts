// A stream that fans out over another's list (members of each project, of each group), selected
// alone through the CLI on an empty warehouse: it fetches the list it needs and stores its rows,
// or, without the account token, is refused (exit 2) before anything is sent or written.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Sandbox, startSandbox } from "../../src/sandbox/index.ts";
import { cliEnv, runCli } from "../support/child-sync.ts";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";

describe("sync --streams <a child stream> alone", () => {
  let sandbox: Sandbox;
  let db: TestDatabase;
  const env = (accountToken = true) =>
    cliEnv({
      baseUrl: sandbox.url,
      databaseUrl: db.url,
      projects: sandbox.projects,
      ...(accountToken ? { accountToken: sandbox.accountToken } : {}),
    });
  const count = async (table: string) => (await db.sql`SELECT count(*)::int AS n FROM ${db.sql(table)}`)[0]!.n as number;

  beforeAll(async () => {
    [sandbox, db] = await Promise.all([startSandbox({ projects: 2, burstKeys: 0 }), createTestDatabase()]);
  }, 60_000);

  afterAll(async () => {
    await sandbox?.stop();
    await db?.drop();
  });

  it("without the account token: exit 2 naming APM_ACCOUNT_TOKEN, nothing sent, nothing written", async () => {
    for (const stream of ["account.project_members", "account"]) {
      const run = await runCli(["sync", "--streams", stream], env(false));
      expect(run.code, run.stderr).toBe(2);
      expect(run.stderr).toContain("APM_ACCOUNT_TOKEN is not set");
      expect(run.stderr).toContain("account.project_members");
      expect(run.stdout).not.toContain("complete");
    }
    expect(sandbox.requestLog).toHaveLength(0);
    expect(await count("sync_runs")).toBe(0);
  });

  it("account.project_members fetches the project list too and stores every listed project's members", async () => {
    sandbox.clearLog();
    const run = await runCli(["sync", "--streams", "account.project_members"], env());
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain("account.project_members fan out over the list of account.projects: it is fetched too");
    const ops = sandbox.requestLog.map((r) => r.opId);
    expect(ops.filter((op) => op === "account.projects")).toHaveLength(1);
    expect(ops.filter((op) => op === "account.project_members")).toHaveLength(sandbox.projects.length);
    const members = await db.sql<{ pcode: string; n: number }[]>`
      SELECT pcode::text, count(*)::int AS n FROM project_members GROUP BY pcode ORDER BY pcode`;
    expect(members.map((m) => Number(m.pcode))).toEqual(sandbox.projects.map((p) => p.pcode).sort((a, b) => a - b));
    for (const m of members) expect(m.n).toBeGreaterThan(0);
    expect(run.stdout).toMatch(/^account\.project_members\s+2 windows\s/m);
  });

  it("account.group_members fetches the group list and says which keys it cannot ask for", async () => {
    sandbox.clearLog();
    const run = await runCli(["sync", "--streams", "account.group_members"], env());
    expect(run.code, run.stderr).toBe(0);
    expect(sandbox.requestLog.map((r) => r.opId)).toContain("account.groups");
    expect(await count("groups")).toBeGreaterThan(0);
    // The sandbox masks every group key ("grp****..."): the run says so instead of a silent nothing.
    expect(run.stderr).toMatch(/key\(s\) of account\.groups are masked by the server: their account\.group_members is skipped/);
  });
});
