// First contact, as a new user meets it with the real binary: every usage and configuration
// problem exits 2 before anything is requested, names the setting and says what to check, with
// "did you mean" for names that are almost right; nothing is created by a command that failed so.
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Sandbox, startSandbox } from "../../src/sandbox/index.ts";
import { REPO_ROOT, runCli } from "../support/child-sync.ts";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";
import { unusedPort } from "../support/http-server.ts";

let sandbox: Sandbox;
let db: TestDatabase;
let dir: string;
let refusedPort = 0;

beforeAll(async () => {
  [sandbox, db] = await Promise.all([startSandbox({ burstKeys: 0, projects: 1 }), createTestDatabase()]);
  dir = mkdtempSync(join(tmpdir(), "apm-usage-"));
  refusedPort = await unusedPort();
}, 60_000);

afterAll(async () => {
  await Promise.all([sandbox?.stop(), db?.drop()]);
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const env = () => ({
  APM_BASE_URL: sandbox.url,
  APM_PROJECTS: `${sandbox.projects[0]!.pcode}:${sandbox.projects[0]!.token}`,
  DATABASE_URL: db.url,
  APM_LOG_FORMAT: "plain",
});

/** A config file in the test's directory. */
function config(name: string, content: unknown): string {
  const path = join(dir, name);
  writeFileSync(path, JSON.stringify(content));
  return path;
}

interface Case {
  readonly args: readonly string[];
  readonly env?: () => Record<string, string>;
  readonly says: readonly RegExp[];
}

const CASES: Record<string, Case> = {
  "an unknown flag": { args: ["sync", "--form"], says: [/unknown option '--form'/] },
  "an unknown command, with commander's suggestion": { args: ["synch"], says: [/unknown command 'synch'/, /Did you mean sync\?/] },
  "a missing --to": { args: ["backfill", "--from", "2d"], says: [/required option '--to <time>' not specified/] },
  "a mistyped flag and the required one it misses, both at once": {
    args: ["backfill", "--form", "2d", "--to", "now", "--dryrun"],
    says: [
      /unknown option '--form' \(did you mean --from\?\); unknown option '--dryrun' \(did you mean --dry-run\?\); required option '--from <time>' not specified/,
    ],
  },
  "bad values of several flags, all at once": {
    args: ["backfill", "--from", "banana", "--to", "pear", "--streams", "stat.nope"],
    says: [/unknown stream "stat\.nope".*; --from: expected .*got "banana"; --to: expected .*got "pear"/],
  },
  "verify: a bad --to and --sample, both at once": {
    args: ["verify", "--from", "2h", "--to", "pear", "--sample", "0"],
    says: [/--to: expected .*got "pear"; --sample: expected a whole number of windows \(1 or more\), got "0"/],
  },
  "verify of points streams only": {
    args: ["verify", "--from", "2h", "--to", "1h", "--streams", "project.event_history"],
    says: [/--streams: no statistics or range stream selected; verify compares those/],
  },
  "a bare enqueue": { args: ["enqueue"], says: [/Usage: apm-sync enqueue/, /backfill \[options\]/] },
  "a database that does not exist": {
    args: ["sync"],
    env: () => ({ ...env(), DATABASE_URL: `${db.url}_missing` }),
    says: [/DATABASE_URL: database "apm_t_\w+_missing" does not exist; check the database name in DATABASE_URL/],
  },
  "an unknown role": {
    args: ["status"],
    env: () => {
      const url = new URL(db.url);
      url.username = "nobody_apm";
      return { ...env(), DATABASE_URL: url.href };
    },
    says: [/DATABASE_URL: role "nobody_apm" does not exist; check the user name and password in DATABASE_URL/],
  },
  "a refused connection, never echoing the password": {
    args: ["migrate"],
    env: () => ({ DATABASE_URL: `postgres://etl:pw-s3cret@127.0.0.1:${refusedPort}/warehouse` }),
    says: [/DATABASE_URL: connection refused at 127\.0\.0\.1:\d+; check the host and port in DATABASE_URL/],
  },
  "a data directory under /proc (recursive mkdir never returns there)": {
    args: ["sync"],
    env: () => ({ ...env(), DATABASE_URL: "", APM_DATA_DIR: "/proc/apm" }),
    says: [/APM_DATA_DIR \(file key dataDir\): \/proc\/apm cannot be created \(ENOENT\)/],
  },
  "a data directory under a file": {
    args: ["backfill", "--from", "2h", "--to", "1h"],
    env: () => ({ ...env(), DATABASE_URL: "", APM_DATA_DIR: join(REPO_ROOT, "package.json", "x") }),
    says: [/APM_DATA_DIR \(file key dataDir\): .*package.json\/x cannot be created \(ENOTDIR\)/],
  },
  "a grain off the 5-minute grid, at load time (check too)": {
    args: ["check", "--config", "{grains}"],
    says: [/grains\["stat.sql"\]: must be a positive multiple of 5 minutes .* got "7m"/],
  },
  "an overrides key that is not an open operation": {
    args: ["sync", "--config", "{overrides}"],
    says: [/overrides\["stat.transactions"\]: unknown operation "stat.transactions" \(did you mean stat.transaction\?\)/],
  },
  "mistyped keys and variables": {
    args: ["sync", "--config", "{typos}"],
    env: () => ({ ...env(), APM_PROJETS: "1:x" }),
    says: [
      /APM_PROJETS is not a setting of apm-sync \(did you mean APM_PROJECTS\?\)/,
      /unknown key "projets" \(did you mean projects\?\)/,
      /unknown key "requestPerSecond" \(did you mean requestsPerSecond\?\)/,
    ],
  },
  "a chunk that is not whole 5-minute steps": {
    args: ["enqueue", "backfill", "--from", "2d", "--to", "now", "--chunk", "7m"],
    says: [/--chunk: must be a positive multiple of 5 minutes \(5m, 30m, 1h, 1d\), got "7m"/],
  },
  "APM_PROJECTS separated by semicolons": {
    args: ["sync"],
    env: () => ({ ...env(), APM_PROJECTS: "1001:tok1;1002:tok2" }),
    says: [/APM_PROJECTS: entry 1: the token of project 1001 holds .* separate entries with commas/],
  },
  "a mistyped stream id": { args: ["sync", "--streams", "stat.transactions"], says: [/did you mean stat.transaction\?/] },
  "a docs-only operation, as `streams` lists it": {
    args: ["sync", "--streams", "extra.fullgclog"],
    says: [/extra.fullgclog is a docs-only operation: it has no table and is not synced/],
  },
  "nothing configured (check)": {
    args: ["check"],
    env: () => ({ APM_BASE_URL: sandbox.url }),
    says: [/no token is configured, so there is nothing to do: set APM_PROJECTS=pcode:token.*APM_ACCOUNT_TOKEN/],
  },
};

describe("usage and configuration problems exit 2 and say what to check", () => {
  for (const [what, c] of Object.entries(CASES))
    it(what, async () => {
      const files: Record<string, string> = {
        "{grains}": config("grains.json", { grains: { "stat.sql": "7m" } }),
        "{overrides}": config("overrides.json", { overrides: { "stat.transactions": { method: "POST", path: "/x" } } }),
        "{typos}": config("typos.json", { projets: [], requestPerSecond: 5 }),
      };
      sandbox.clearLog();
      const run = await runCli(
        c.args.map((a) => files[a] ?? a),
        (c.env ?? env)(),
        { timeoutMs: 30_000, cwd: dir },
      );
      expect({ code: run.code, stdout: run.stdout }).toEqual({ code: 2, stdout: "" });
      for (const says of c.says) expect(run.stderr).toMatch(says);
      // Nothing was requested, and no secret was echoed.
      expect(sandbox.requestLog).toHaveLength(0);
      for (const secret of ["tok1", "pw-s3cret", sandbox.projects[0]!.token]) expect(run.stderr).not.toContain(secret);
    });

  it("creates nothing: no embedded database for `sync` with nothing to do, none for `status` at a mistyped path", async () => {
    const cwd = mkdtempSync(join(dir, "empty-"));
    const sync = await runCli(["sync"], { APM_BASE_URL: sandbox.url }, { cwd });
    expect(sync.code).toBe(2);
    const typo = join(cwd, "apm-synk");
    const status = await runCli(["status"], { APM_DATA_DIR: typo }, { cwd });
    expect(status.code).toBe(2);
    expect(status.stderr).toContain(`APM_DATA_DIR (file key dataDir): no warehouse at ${typo}/pgdata`);
    expect(readdirSync(cwd)).toEqual([]);
    expect(existsSync(typo)).toBe(false);
  });

  it("writes a usage error as one JSON line when JSON was asked for", async () => {
    const run = await runCli(["--log-format", "json", "sync", "--form"], env());
    expect(run.code).toBe(2);
    const lines = run.stderr.trim().split("\n");
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!)).toMatchObject({ level: 50, msg: "unknown option '--form'", exitCode: 2 });
  });
});

describe("help and version", () => {
  it("--version prints the package's version", async () => {
    const run = await runCli(["--version"], {});
    const { version } = JSON.parse(readFileSync(join(REPO_ROOT, "package.json"), "utf8")) as { version: string };
    expect({ code: run.code, out: run.stdout.trim() }).toEqual({ code: 0, out: version });
  });

  it("--help and each command's help name the environment, an example and the exit codes", async () => {
    for (const args of [["--help"], ["sync", "--help"], ["status", "--help"], ["backfill", "--help"], ["verify", "--help"]]) {
      const run = await runCli(args, {});
      expect(run.code, args.join(" ")).toBe(0);
      expect(run.stdout).toMatch(/Environment.*:\n {2}.*(APM_BASE_URL|DATABASE_URL)/);
      expect(run.stdout).toMatch(/Example:\n {2}(apm-sync|export APM_BASE_URL)/);
      expect(run.stdout).toMatch(/Exit codes:\n {2}0 .*\n {2}1 .*\n {2}2 +configuration or usage/);
    }
  });

  it("enqueue's help (and its subcommands') gives enqueue's exit codes, not sync's", async () => {
    for (const args of [
      ["enqueue", "--help"],
      ["enqueue", "backfill", "--help"],
      ["enqueue", "sync", "--help"],
    ]) {
      const run = await runCli(args, {});
      expect(run.code, args.join(" ")).toBe(0);
      const codes = run.stdout.split("Exit codes:\n")[1] ?? "";
      expect({ args, codes }).toEqual({
        args,
        codes: expect.stringMatching(/^ {2}0 +queued .*\n {2}1 +the database failed\n {2}2 +configuration or usage/),
      });
      expect(codes).not.toContain("stream");
    }
  });

  it("the README's commands table has two cells a row: the command and what it does", () => {
    const readme = readFileSync(join(REPO_ROOT, "README.md"), "utf8");
    const table = readme.split("| command | does |")[1]!.split("\n\n")[0]!;
    const rows = table.split("\n").filter((l) => l.startsWith("| `"));
    expect(rows.length).toBeGreaterThan(10);
    // Cells are split on `|` not escaped (`schema [--markdown\|--json]`).
    const cells = (row: string) => (row.trimEnd().endsWith("|") ? row.split(/(?<!\\)\|/).length - 2 : Number.NaN);
    expect(rows.filter((r) => cells(r) !== 2).map((r) => r.slice(0, 40))).toEqual([]);
  });
});
