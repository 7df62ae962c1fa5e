// Settings that used to load and then fail, or do the wrong thing, at run time: the real CLI
// refuses them when it reads the configuration (exit 2, naming the setting, never printing a
// token), before any request is sent or any row read.
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from "node:fs";
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

  // Issue 38 point 7: each used to load, then fail late or never (a Postgres 22009, a timer of
  // 1 ms, a worker that never ran a sync, "Invalid URL" after the warehouse was made).
  const DAY = 86_400_000;
  const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);
  it.each([
    ["APM_SETTLE", { APM_SETTLE: "99999999999999999999s" }, ["sync"], /APM_SETTLE: must be at most 3650d/],
    ["APM_START", { APM_START: "99999999999999999999s" }, ["sync"], /APM_START: must be from 2000-01-01 to a day from now/],
    ["APM_OPEN_EVENT_LOOKBACK", { APM_OPEN_EVENT_LOOKBACK: "1000000d" }, ["sync"], /APM_OPEN_EVENT_LOOKBACK: must be at most 3650d/],
    ["APM_TIMEOUT", { APM_TIMEOUT: "30d" }, ["sync"], /APM_TIMEOUT: must be at most 1d, got "30d"/],
    ["a bare number", { APM_DB_RETRY: "7" }, ["sync"], /APM_DB_RETRY: say a unit: 7s, 7m, 7h or 7d/],
    ["APM_SCHEDULE 61", { APM_SCHEDULE: "61 * * * *" }, ["worker"], /APM_SCHEDULE: minute: 61 is outside 0-59/],
    ["APM_SCHEDULE */0", { APM_SCHEDULE: "*/0 * * * *" }, ["worker"], /APM_SCHEDULE: minute: the step of "\*\/0" must be from 1 to 60/],
    ["APM_BASE_URL", { APM_BASE_URL: "http://api.exa mple.com" }, ["sync"], /APM_BASE_URL: holds a space or line break at character 15/],
    ["DATABASE_URL", { DATABASE_URL: "postgres://etl@db host/x" }, ["sync"], /DATABASE_URL: holds a space or line break at character 18/],
    ["HTTPS_PROXY", { HTTPS_PROXY: "http://pro xy:3128" }, ["sync"], /HTTPS_PROXY: holds a space or line break at character 11/],
    ["--to of transfer", {}, ["transfer", "--to", "postgres://etl@db host/x"], /--to: holds a space or line break at character 18/],
    ["--from", {}, ["backfill", "--from", "1999-12-31", "--to", "2000-01-02"], /--from: must be from 2000-01-01 .*"1999-12-31"/],
    ["--to", {}, ["backfill", "--from", "1d", "--to", day(Date.now() + 3 * DAY)], /--to: must be from 2000-01-01 to a day from now/],
  ])(
    "%s: exit 2 naming it, within seconds, nothing written",
    async (_what, extra, args, says) => {
      // Embedded (no DATABASE_URL unless the case sets one): the data directory must not appear.
      const dataDir = join(dir, `never-${Math.random().toString(36).slice(2)}`);
      const { DATABASE_URL: _, ...embedded } = env({ APM_DATA_DIR: dataDir });
      const before = server.requests.length;
      const run = await runCli(args, { ...embedded, ...extra }, { timeoutMs: 60_000 });
      expect({ code: run.code }, run.stderr).toEqual({ code: 2 });
      expect(run.stderr).toMatch(says);
      // Loaded test machines start the CLI slowly; before, these ran for minutes or never ended.
      expect(run.durationMs).toBeLessThan(30_000);
      expect(existsSync(dataDir)).toBe(false);
      expect(server.requests.length).toBe(before);
    },
    60_000,
  );

  it("APM_SCHEDULE on a Postgres warehouse: the worker writes nothing (no run, no queue)", async () => {
    const run = await runCli(["worker", "--until-idle"], env({ APM_SCHEDULE: "0 0 31 2 *" }), { timeoutMs: 60_000 });
    expect({ code: run.code }, run.stderr).toEqual({ code: 2 });
    expect(run.stderr).toContain('APM_SCHEDULE: never fires: no month it names has a day it names; got "0 0 31 2 *"');
    expect(await db.sql`SELECT id FROM sync_runs`).toEqual([]);
    expect(await db.sql`SELECT nspname FROM pg_namespace WHERE nspname LIKE '%queue%'`).toEqual([]);
  }, 60_000);
});

describe("the embedded data directory, checked before it is opened", () => {
  const dir = mkdtempSync(join(tmpdir(), "apm-datadir-"));
  // A user the permissions apply to: root may write anything.
  const asRoot = process.getuid?.() === 0;
  const user = asRoot ? { uid: 65534, gid: 65534 } : undefined;
  const env = (dataDir: string) => {
    const { DATABASE_URL: _, ...rest } = cliEnv({
      baseUrl: "http://127.0.0.1:9",
      databaseUrl: "",
      projects: [{ pcode: 12, token: "t0k" }],
    });
    return { ...rest, APM_DATA_DIR: dataDir };
  };
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("a file of it this user may not write: exit 2 naming the file (was `failed: [object Object]`, exit 1)", async () => {
    const data = join(dir, "readonly");
    const version = join(data, "pgdata", "PG_VERSION");
    mkdirSync(join(data, "pgdata"), { recursive: true });
    writeFileSync(version, "17\n");
    chmodSync(version, 0o400);
    if (user) {
      chmodSync(dir, 0o755);
      for (const path of [data, join(data, "pgdata"), version]) chownSync(path, user.uid, user.gid);
    }
    for (const command of ["sync", "status"]) {
      const run = await runCli([command], env(data), { timeoutMs: 60_000, ...(user ? { user } : {}) });
      expect({ command, code: run.code }, run.stderr).toEqual({ command, code: 2 });
      expect(run.stderr).toContain(`APM_DATA_DIR (file key dataDir): this user may not read and write ${version} (EACCES)`);
      expect(run.stderr).not.toContain("[object Object]");
    }
  }, 120_000);

  it("a directory where the lock file goes: exit 2 naming it (was a raw EISDIR, exit 1)", async () => {
    const data = join(dir, "lockdir");
    mkdirSync(join(data, "apm-sync.lock"), { recursive: true });
    const run = await runCli(["sync"], env(data), { timeoutMs: 60_000 });
    expect({ code: run.code }, run.stderr).toEqual({ code: 2 });
    expect(run.stderr).toContain(`${join(data, "apm-sync.lock")} is a directory, not apm-sync's lock file`);
    expect(existsSync(join(data, "pgdata"))).toBe(false);
  }, 60_000);

  it("an empty or garbage lock file left behind is taken over within seconds (was a 10-minute wait)", async () => {
    for (const [name, content] of [
      ["empty", ""],
      ["garbage", "garbage"],
    ]) {
      const data = join(dir, name!);
      mkdirSync(data);
      writeFileSync(join(data, "apm-sync.lock"), content!);
      const old = new Date(Date.now() - 60_000);
      utimesSync(join(data, "apm-sync.lock"), old, old);
      const run = await runCli(["migrate"], { ...env(data), APM_DATA_DIR_WAIT: "5m" }, { timeoutMs: 120_000 });
      expect({ code: run.code }, run.stderr).toEqual({ code: 0 });
      expect(run.stderr).not.toContain("in use by");
      expect(existsSync(join(data, "apm-sync.lock"))).toBe(false);
    }
  }, 240_000);
});
