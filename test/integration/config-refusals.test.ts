// Settings that used to load and then fail, or do the wrong thing, at run time: the real CLI
// refuses them when it reads the configuration (exit 2, naming the setting, never printing a
// token), before any request is sent or any row read.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cliEnv, runCli } from "../support/child-sync.ts";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";
import { reply, startServer, type TestServer } from "../support/http-server.ts";

describe("refused when the configuration is read (exit 2)", () => {
  let server: TestServer;
  let db: TestDatabase;
  const dir = mkdtempSync(join(tmpdir(), "apm-refusals-"));
  const env = (extra: Record<string, string> = {}) =>
    cliEnv({ baseUrl: server.url, databaseUrl: db.url, projects: [{ pcode: 12, token: "good-T0KEN-12" }], extra });
  const configFile = (content: unknown) => {
    const path = join(dir, `c${Math.random().toString(36).slice(2)}.json`);
    writeFileSync(path, typeof content === "string" ? content : JSON.stringify(content));
    return path;
  };

  beforeAll(async () => {
    server = await startServer((_req, res) => reply(res, 404, "{}"));
    db = await createTestDatabase();
  });
  afterAll(async () => {
    await server?.close();
    await db?.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("a retention too long to have a start (stat=99999999y) used to fail the run (exit 1)", async () => {
    const run = await runCli(["prune", "--dry-run"], env({ APM_RETENTION: "stat=99999999y" }));
    expect({ code: run.code }, run.stderr).toEqual({ code: 2 });
    expect(run.stderr).toMatch(/APM_RETENTION: stat: expected a retention .*at most 1000y.*got "99999999y"/);
    const fine = await runCli(["prune", "--dry-run"], env({ APM_RETENTION: "stat=1000y" }));
    expect({ code: fine.code }, fine.stderr).toEqual({ code: 0 });
  }, 60_000);

  it("a token holding CR/LF used to fail every request (UND_ERR_INVALID_ARG, exit 1); it is named, never printed", async () => {
    const token = "evil-T0KEN\r\nx-injected: 1";
    const file = configFile({ projects: [{ pcode: 12, token }] });
    const { APM_PROJECTS: _, ...noProjects } = env();
    const before = server.requests.length;
    for (const [args, extra] of [
      [["--config", file, "sync", "--streams", "stat.transaction"], noProjects],
      [["sync", "--streams", "stat.transaction"], { ...env(), APM_ACCOUNT_TOKEN: token }],
    ] as const) {
      const run = await runCli(args, extra);
      expect({ code: run.code }, run.stderr).toEqual({ code: 2 });
      expect(run.stderr).toMatch(
        /(projects\[0\]: the token of project 12|APM_ACCOUNT_TOKEN: the account token) holds a line break \(CR or LF\) at character 11/,
      );
      expect(`${run.stdout}${run.stderr}`).not.toContain("evil-T0KEN");
      expect(`${run.stdout}${run.stderr}`).not.toContain("injected");
    }
    expect(server.requests.length).toBe(before);
  }, 60_000);

  it("an agent id beyond 2^53 in the inputs used to be rounded to another agent's id", async () => {
    // As the file holds it: JavaScript cannot even write this number.
    const file = configFile('{"inputs": {"series.thread_count.oids": [{"oids": [1, 9007199254740993]}]}}');
    const args = [
      "--config",
      file,
      "backfill",
      "--dry-run",
      "--from",
      "2026-01-01",
      "--to",
      "2026-01-02",
      "--streams",
      "series.thread_count.oids",
    ];
    const run = await runCli(args, env());
    expect({ code: run.code }, run.stderr).toEqual({ code: 2 });
    expect(run.stderr).toContain('inputs["series.thread_count.oids"][0].oids[1]: a number beyond 2^53 - 1');
    expect(run.stdout).not.toContain("9007199254740992");
  }, 60_000);
});
