// The README's exit code table, checked against the real binary: every command the CLI has is in
// the table, and every code the table gives a command is produced by a run of that command here
// (the sandbox over a real socket, a real Postgres, signals sent to the child).
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Sandbox, startSandbox } from "../../src/sandbox/index.ts";
import { type ChildExit, type ChildRun, cliEnv, REPO_ROOT, runCli, spawnCli, waitUntil } from "../support/child-sync.ts";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";
import { type ExitTable, readExitTable } from "../support/exit-table.ts";

interface Fixtures {
  readonly sandbox: Sandbox;
  /** Answers after 300 ms: a run is still going when the signal comes. */
  readonly slow: Sandbox;
  readonly db: TestDatabase;
  /** A TCP port that accepts and drops every connection: a database that fails (not a wrong URL). */
  readonly deadDb: string;
  /** A config file whose stat.sql path the sandbox answers 404: windows and probes fail. */
  readonly failing: string;
  readonly dir: string;
  /** An embedded warehouse (migrated, empty) to transfer, and an empty database to transfer it to. */
  readonly embedded: string;
  readonly empty: TestDatabase;
}

interface Scenario {
  readonly command: string;
  readonly code: number;
  readonly why: string;
  readonly args: readonly string[];
  readonly env: (fx: Fixtures) => Record<string, string>;
  /** Sent once `ready` holds (default: the first request reached the slow sandbox). */
  readonly signal?: NodeJS.Signals;
  readonly ready?: (fx: Fixtures, run: ChildRun) => boolean;
  readonly check?: (exit: ChildExit) => void;
}

const api = (fx: Fixtures, s: Sandbox = fx.sandbox) =>
  cliEnv({ baseUrl: s.url, databaseUrl: fx.db.url, projects: s.projects, accountToken: s.accountToken, extra: { APM_START: "1h" } });
// A database that drops every connection is retried for APM_DB_RETRY (60 s by default), then given up.
const dead = (fx: Fixtures) => ({ ...api(fx), DATABASE_URL: fx.deadDb, APM_DB_RETRY: "1s" });
const saysGivenUp = (exit: ChildExit) => {
  expect(exit.stderr).toContain("still unavailable after 1 s of retries");
  expect(exit.stderr).toContain("then run the command again");
};
const range = ["--from", "3h", "--to", "1h", "--streams", "stat.sql"];
const slowStarted = (fx: Fixtures) => fx.slow.requestLog.length > 0;
const stderrHas = (text: string) => (_: Fixtures, run: ChildRun) => run.stderr().includes(text) || run.stdout().includes(text);

// Scenarios are run in this order (the worker drains an empty queue before enqueue fills it).
const SCENARIOS: readonly Scenario[] = [
  { command: "sync", code: 0, why: "one stream complete", args: ["sync", "--streams", "stat.sql"], env: api },
  { command: "sync", code: 1, why: "its windows answered 404", args: ["sync", "--config", "{failing}"], env: api },
  { command: "sync", code: 2, why: "unknown flag", args: ["sync", "--form"], env: api },
  { command: "sync", code: 130, why: "Ctrl-C", args: ["sync"], env: (fx) => api(fx, fx.slow), signal: "SIGINT" },
  { command: "sync", code: 143, why: "SIGTERM", args: ["sync"], env: (fx) => api(fx, fx.slow), signal: "SIGTERM" },
  { command: "backfill", code: 0, why: "two hours of one stream", args: ["backfill", ...range], env: api },
  // verify before the --refetch below records those windows failed: it reads the ones the ledger has done.
  { command: "verify", code: 0, why: "the backfilled windows agree", args: ["verify", ...range], env: api },
  { command: "verify", code: 1, why: "its windows answered 404", args: ["verify", ...range, "--config", "{failing}"], env: api },
  { command: "verify", code: 2, why: "--sample 0", args: ["verify", ...range, "--sample", "0"], env: api },
  { command: "verify", code: 130, why: "Ctrl-C", args: ["verify", ...range], env: (fx) => api(fx, fx.slow), signal: "SIGINT" },
  { command: "verify", code: 143, why: "SIGTERM", args: ["verify", ...range], env: (fx) => api(fx, fx.slow), signal: "SIGTERM" },
  // --refetch: the backfill before completed the range, which a backfill otherwise skips.
  {
    command: "backfill",
    code: 1,
    why: "its windows answered 404",
    args: ["backfill", ...range, "--refetch", "--config", "{failing}"],
    env: api,
  },
  { command: "backfill", code: 2, why: "no --to", args: ["backfill", "--from", "2d"], env: api },
  {
    command: "backfill",
    code: 130,
    why: "Ctrl-C",
    args: ["backfill", "--from", "1d", "--to", "now"],
    env: (fx) => api(fx, fx.slow),
    signal: "SIGINT",
  },
  {
    command: "backfill",
    code: 143,
    why: "SIGTERM",
    args: ["backfill", "--from", "1d", "--to", "now"],
    env: (fx) => api(fx, fx.slow),
    signal: "SIGTERM",
  },
  { command: "check", code: 0, why: "every probe ok", args: ["check", "--streams", "stat.sql"], env: api },
  { command: "check", code: 1, why: "a probe not found", args: ["check", "--config", "{failing}"], env: api },
  { command: "check", code: 2, why: "no token", args: ["check"], env: (fx) => ({ APM_BASE_URL: fx.sandbox.url }) },
  { command: "status", code: 0, why: "the warehouse", args: ["status"], env: api },
  { command: "status", code: 1, why: "the database drops the connection", args: ["status"], env: dead, check: saysGivenUp },
  {
    command: "status",
    code: 2,
    why: "no warehouse in that directory",
    args: ["status"],
    env: (fx) => ({ APM_DATA_DIR: join(fx.dir, "typo") }),
  },
  { command: "report", code: 0, why: "the page", args: ["report", "--out", "{dir}/r.html"], env: api },
  {
    command: "report",
    code: 1,
    why: "the database drops the connection",
    args: ["report", "--out", "{dir}/r.html"],
    env: dead,
    check: saysGivenUp,
  },
  { command: "report", code: 2, why: "a bad --from", args: ["report", "--from", "yesterday"], env: api },
  { command: "migrate", code: 0, why: "already up to date", args: ["migrate"], env: api },
  { command: "migrate", code: 1, why: "the database drops the connection", args: ["migrate"], env: dead, check: saysGivenUp },
  { command: "migrate", code: 2, why: "no such database", args: ["migrate"], env: (fx) => ({ DATABASE_URL: `${fx.db.url}_nope` }) },
  {
    command: "transfer",
    code: 0,
    why: "an empty warehouse copied",
    args: ["transfer", "--to", "{empty}"],
    env: (fx) => ({ APM_DATA_DIR: fx.embedded }),
  },
  {
    command: "transfer",
    code: 1,
    why: "the target drops the connection",
    args: ["transfer", "--to", "{dead}"],
    env: (fx) => ({ APM_DATA_DIR: fx.embedded }),
  },
  {
    command: "transfer",
    code: 2,
    why: "the target holds data",
    args: ["transfer", "--to", "{db}"],
    env: (fx) => ({ APM_DATA_DIR: fx.embedded }),
  },
  { command: "streams", code: 0, why: "the catalogue", args: ["streams"], env: () => ({}) },
  { command: "streams", code: 2, why: "unknown flag", args: ["streams", "--jsn"], env: () => ({}) },
  { command: "schema", code: 0, why: "the dictionary", args: ["schema", "--json"], env: () => ({}) },
  { command: "schema", code: 2, why: "unknown flag", args: ["schema", "--mrkdown"], env: () => ({}) },
  { command: "reset", code: 0, why: "a dry run", args: ["reset", "--streams", "stat.sql", "--dry-run"], env: api },
  {
    command: "reset",
    code: 1,
    why: "the database drops the connection",
    args: ["reset", "--streams", "stat.sql"],
    env: dead,
    check: saysGivenUp,
  },
  { command: "reset", code: 2, why: "no --streams", args: ["reset"], env: api },
  { command: "prune", code: 0, why: "a dry run", args: ["prune", "--dry-run"], env: (fx) => ({ ...api(fx), APM_RETENTION: "stat=30d" }) },
  {
    command: "prune",
    code: 1,
    why: "the database drops the connection",
    args: ["prune"],
    env: (fx) => ({ ...dead(fx), APM_RETENTION: "stat=30d" }),
    check: saysGivenUp,
  },
  {
    command: "prune",
    code: 2,
    why: "a retention key that names nothing",
    args: ["prune"],
    env: (fx) => ({ ...api(fx), APM_RETENTION: "stats=30d" }),
  },
  {
    command: "restore",
    code: 1,
    why: "the database drops the connection",
    args: ["restore", "--months", "2026-01"],
    env: (fx) => ({ ...dead(fx), APM_ARCHIVE: fx.dir }),
    check: saysGivenUp,
  },
  {
    command: "restore",
    code: 2,
    why: "a month that is not YYYY-MM",
    args: ["restore", "--months", "2026-1"],
    env: (fx) => ({ ...api(fx), APM_ARCHIVE: fx.dir }),
  },
  { command: "worker", code: 0, why: "idle", args: ["worker", "--until-idle"], env: api },
  { command: "worker", code: 1, why: "the database drops the connection", args: ["worker", "--until-idle"], env: dead, check: saysGivenUp },
  { command: "worker", code: 2, why: "--concurrency 0", args: ["worker", "--concurrency", "0"], env: api },
  { command: "worker", code: 130, why: "Ctrl-C", args: ["worker"], env: api, signal: "SIGINT", ready: stderrHas("job(s) at once") },
  { command: "worker", code: 143, why: "SIGTERM", args: ["worker"], env: api, signal: "SIGTERM", ready: stderrHas("job(s) at once") },
  { command: "enqueue backfill", code: 0, why: "queued", args: ["enqueue", "backfill", ...range], env: api },
  {
    command: "enqueue backfill",
    code: 1,
    why: "the database drops the connection",
    args: ["enqueue", "backfill", ...range],
    env: dead,
    check: saysGivenUp,
  },
  { command: "enqueue backfill", code: 2, why: "--chunk 7m", args: ["enqueue", "backfill", ...range, "--chunk", "7m"], env: api },
  { command: "enqueue sync", code: 0, why: "queued", args: ["enqueue", "sync"], env: api },
  { command: "enqueue sync", code: 1, why: "the database drops the connection", args: ["enqueue", "sync"], env: dead, check: saysGivenUp },
  { command: "enqueue sync", code: 2, why: "no DATABASE_URL", args: ["enqueue", "sync"], env: (fx) => ({ ...api(fx), DATABASE_URL: "" }) },
  {
    command: "simulate",
    code: 0,
    why: "stopped",
    args: ["simulate", "--port", "0"],
    env: () => ({}),
    signal: "SIGINT",
    ready: stderrHas("listening on"),
  },
  { command: "simulate", code: 2, why: "a bad port", args: ["simulate", "--port", "http"], env: () => ({}) },
  { command: "demo", code: 0, why: "complete", args: ["demo", "--json", "--data-dir", "{dir}/demo"], env: () => ({}) },
  { command: "demo", code: 2, why: "a data directory that cannot be created", args: ["demo", "--data-dir", "/proc/apm"], env: () => ({}) },
  {
    command: "demo",
    code: 130,
    why: "Ctrl-C says what it wrote",
    args: ["demo", "--data-dir", "{dir}/demo-int"],
    env: () => ({}),
    signal: "SIGINT",
    ready: stderrHas("first run: syncing"),
    check: (exit) => {
      expect(exit.stdout).toContain("rows and windows written by this run");
      expect(exit.stdout).toContain("stopped early (Ctrl-C)");
    },
  },
];

/** Codes of the table no scenario reproduces, each with the reason (kept short on purpose). */
const NOT_REPRODUCED: Readonly<Record<string, string>> = {
  "demo 1": "the demo's own sandbox has no faults; the code is the sync's (sync 1 above)",
  "restore 0": "needs a month prune archived: test/integration/archive.test.ts restores one on both databases",
};

let fx: Fixtures;
let table: ExitTable;
let deadServer: Server;

beforeAll(async () => {
  table = readExitTable(readFileSync(join(REPO_ROOT, "README.md"), "utf8"));
  deadServer = createServer((socket) => socket.destroy());
  await new Promise<void>((resolve) => deadServer.listen(0, "127.0.0.1", resolve));
  const port = (deadServer.address() as { port: number }).port;
  const dir = mkdtempSync(join(tmpdir(), "apm-exit-"));
  const failing = join(dir, "failing.json");
  writeFileSync(failing, JSON.stringify({ overrides: { "stat.sql": { path: "/open/api/v2/stat/no-such-type" } }, streams: ["stat.sql"] }));
  const embedded = join(dir, "embedded");
  const [sandbox, slow, db, empty] = await Promise.all([
    startSandbox({ burstKeys: 0, projects: 2 }),
    startSandbox({ burstKeys: 0, projects: 2, latencyMs: [300, 300] }),
    createTestDatabase(),
    createTestDatabase({ migrated: false }),
    runCli(["migrate"], { APM_DATA_DIR: embedded }).then((r) => expect(r.code).toBe(0)),
  ]);
  fx = { sandbox, slow, db, deadDb: `postgres://apm@127.0.0.1:${port}/db`, failing, dir, embedded, empty };
  // The queue's schema, for worker and enqueue.
  expect((await runCli(["migrate"], api(fx))).code).toBe(0);
}, 120_000);

afterAll(async () => {
  await Promise.all([fx?.sandbox.stop(), fx?.slow.stop(), fx?.db.drop(), fx?.empty.drop(), new Promise((r) => deadServer?.close(r))]);
  if (fx) rmSync(fx.dir, { recursive: true, force: true });
});

describe("the README's exit code table", () => {
  it("names every command of the CLI", async () => {
    const main = await runCli(["--help"], {});
    const enqueue = await runCli(["enqueue", "--help"], {});
    const section = (help: string) => help.split("Commands:")[1]!.split("\n\n")[0]!;
    const names = (help: string) => [...section(help).matchAll(/^ {2}(\w+)/gm)].map((m) => m[1]!).filter((n) => n !== "help");
    const commands = names(main.stdout).flatMap((c) => (c === "enqueue" ? names(enqueue.stdout).map((s) => `enqueue ${s}`) : [c]));
    expect(commands.length).toBeGreaterThan(10);
    expect([...table.keys()].sort()).toEqual(commands.sort());
  });

  it("has a run here for each code it gives a command, and no run it does not list", () => {
    const listed = [...table].flatMap(([command, codes]) => codes.map((code) => `${command} ${code}`));
    const run = new Set(SCENARIOS.map((s) => `${s.command} ${s.code}`));
    expect(listed.filter((k) => !run.has(k) && !(k in NOT_REPRODUCED))).toEqual([]);
    expect([...run].filter((k) => !listed.includes(k))).toEqual([]);
    expect(Object.keys(NOT_REPRODUCED).filter((k) => !listed.includes(k))).toEqual([]);
  });

  for (const s of SCENARIOS)
    it(`${s.command} exits ${s.code}: ${s.why}`, async () => {
      const urls: Record<string, string> = { "{empty}": fx.empty.url, "{dead}": fx.deadDb, "{db}": fx.db.url };
      const args = s.args.map((a) => urls[a] ?? a.replace("{failing}", fx.failing).replace("{dir}", fx.dir));
      fx.slow.clearLog();
      const child = spawnCli(args, s.env(fx), { cwd: fx.dir, timeoutMs: 150_000 });
      if (s.signal) {
        const ready = s.ready ?? slowStarted;
        expect(await waitUntil(child, () => ready(fx, child), 20), `${child.stderr()}`).toBe("ready");
        child.child.kill(s.signal);
      }
      const exit = await child.exited;
      expect(exit.code, `stdout:\n${exit.stdout}\nstderr:\n${exit.stderr}`).toBe(s.code);
      s.check?.(exit);
    });
});
