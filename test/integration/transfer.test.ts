// `apm-sync transfer --to URL` (the real CLI): an embedded warehouse filled by a real sync against
// the sandbox is copied into a new, empty Postgres database; every table's rows are equal on both
// sides; a sync against the copy sends only what its ledger does not cover (the same requests as
// against the original); a second transfer into the now non-empty copy exits 2 and writes nothing.
// The target's password never shows.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { operation } from "../../src/catalogue/index.ts";
import { isWindowed } from "../../src/catalogue/types.ts";
import { type Database, openDatabase } from "../../src/db/driver/connect.ts";
import { tableInfo, tableNames } from "../../src/db/tables.ts";
import { type Sandbox, startSandbox } from "../../src/sandbox/index.ts";
import { migrateDatabase } from "../../src/warehouse/migrate.ts";
import { runCli } from "../support/child-sync.ts";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";
import { FAST_ENV, runEngine } from "../support/engine-harness.ts";

const NOW = Date.UTC(2026, 9, 14, 12, 0, 0);
// No configurable lookback: what a sync at the same clock fetches again is what the ledger lacks,
// plus the lookbacks the catalogue declares for a stream (config cannot turn those off).
const ENV = { APM_START: "3h", APM_LOOKBACK: "0", APM_EVENT_LOOKBACK: "0", APM_OPEN_EVENT_LOOKBACK: "0" };
const PASSWORD = "transfer-pw-7Qz";
const SCHEMA = "apm";

let sandbox: Sandbox;
let dir: string;
let target: TestDatabase;
let targetUrl: string;
let source: Record<string, string[]>;
let firstWindowed: number;

/** Every warehouse table's rows as text, sorted: equal dumps mean equal tables. */
async function dumpAll(sql: postgres.Sql): Promise<Record<string, string[]>> {
  return sql.begin(async (tx) => {
    await tx.unsafe("SET LOCAL TIME ZONE 'UTC'");
    await tx.unsafe("SET LOCAL extra_float_digits = 3");
    const out: Record<string, string[]> = {};
    for (const table of tableNames()) {
      const cols = [...tableInfo(table).types.keys()].map((c) => `"${c}"`).join(", ");
      const rows = await tx.unsafe<{ r: string }[]>(`SELECT row(${cols})::text AS r FROM "${table}"`);
      out[table] = rows.map((r) => r.r).sort();
    }
    return out;
  }) as Promise<Record<string, string[]>>;
}

const engine = (database: Database) => ({
  baseUrl: sandbox.url,
  projects: sandbox.projects,
  accountToken: sandbox.accountToken,
  database,
  now: () => NOW,
  env: ENV,
});

/** The windowed requests of the sandbox's log, as comparable keys. */
function windowedRequests(): string[] {
  return sandbox.requestLog.filter((e) => e.stime !== null).map((e) => `${e.opId} ${e.pcode} ${e.stime} ${e.etime}`);
}

async function withEmbedded<T>(fn: (db: Database) => Promise<T>): Promise<T> {
  const db = await openDatabase({ databaseUrl: null, dataDir: dir, dbSchema: SCHEMA });
  try {
    return await fn(db);
  } finally {
    await db.close();
  }
}

const transfer = (to: string) =>
  runCli(["transfer", "--to", to], { ...FAST_ENV, APM_DATA_DIR: dir, APM_DB_SCHEMA: SCHEMA }, { timeoutMs: 180_000 });

beforeAll(async () => {
  // A record of stat.sql the parser refuses now and then: the quarantine has rows to copy too.
  sandbox = await startSandbox({
    now: () => NOW,
    seed: 3,
    projects: 2,
    maxRecords: 300,
    burstKeys: 350,
    hostile: { modes: ["bad-record"], ops: ["stat.sql"], rate: 0.3 },
  });
  dir = await mkdtemp(join(tmpdir(), "apm-transfer-"));
  await withEmbedded(async (db) => {
    await migrateDatabase(db);
    const run = await runEngine(engine(db), { command: "sync", mode: { kind: "sync" } });
    expect(run.exitCode).toBe(0);
    source = await dumpAll(db.sql);
  });
  firstWindowed = windowedRequests().length;
  target = await createTestDatabase({ migrated: false });
  const url = new URL(target.url);
  url.password = PASSWORD;
  targetUrl = url.toString();
}, 240_000);

afterAll(async () => {
  await target?.drop();
  await sandbox?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe("apm-sync transfer --to", () => {
  it("copies every table into the empty Postgres, prints the counts and the DATABASE_URL to use, never the password", async () => {
    const run = await transfer(targetUrl);
    expect(run.code, run.stderr).toBe(0);
    expect(`${run.stdout}${run.stderr}`).not.toContain(PASSWORD);
    expect(run.stdout).toContain(`next: use DATABASE_URL=${targetUrl.replace(PASSWORD, "***")}`);
    for (const table of tableNames()) {
      const n = source[table]!.length;
      expect(run.stdout, table).toMatch(new RegExp(`^${table} +${n} +${n}$`, "m"));
    }
    // The sync filled the tables that matter: a copy of empty tables would prove nothing.
    const filled = Object.entries(source)
      .filter(([, rows]) => rows.length > 0)
      .map(([t]) => t);
    expect(filled).toEqual(
      expect.arrayContaining(["sync_runs", "sync_windows", "watermarks", "quarantine", "stat_sql", "metric_points", "events"]),
    );
    expect(filled.filter((t) => t.startsWith("rollup_")).length).toBeGreaterThan(5);
    expect(await dumpAll(target.sql)).toEqual(source);
  }, 240_000);

  it("a sync against the copy asks for what its ledger lacks, as a sync against the original would", async () => {
    sandbox.clearLog();
    const onCopy = await runEngine(engine(target), { command: "sync", mode: { kind: "sync" } });
    expect(onCopy.exitCode).toBe(0);
    const copyRequests = windowedRequests();
    // The run's id follows the copied runs: the sequence was set past them.
    const [max] = await target.sql<{ id: number }[]>`SELECT max(id)::int AS id FROM sync_runs WHERE id <> ${onCopy.runId}`;
    expect(onCopy.runId).toBe(max!.id + 1);
    // Snapshots and lists are captured every run: the sync did talk to the server.
    expect(sandbox.requestLog.filter((e) => e.stime === null).length).toBeGreaterThan(0);
    // Windowed: only the catalogue's own lookbacks, nothing of the covered history.
    const reread = [...new Set(sandbox.requestLog.filter((e) => e.stime !== null).map((e) => e.opId!))];
    expect(reread.filter((id) => !operation(id).stream?.lookbackMs)).toEqual([]);
    expect(copyRequests.length).toBeLessThan(firstWindowed / 5);
    process.stderr.write(`transfer: the first sync sent ${firstWindowed} windowed requests, the sync on the copy ${copyRequests.length}\n`);

    sandbox.clearLog();
    const onOriginal = await withEmbedded((db) => runEngine(engine(db), { command: "sync", mode: { kind: "sync" } }));
    expect(onOriginal.exitCode).toBe(0);
    expect(copyRequests.sort()).toEqual(windowedRequests().sort());
    const windowedStreams = [...onCopy.streams.keys()].filter((id) => isWindowed(operation(id).stream!));
    expect(windowedStreams.length).toBeGreaterThan(10);
  }, 240_000);

  it("refuses a target that holds data: exit 2, nothing written", async () => {
    const before = await dumpAll(target.sql);
    const [parts] = await target.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM pg_inherits`;
    const run = await transfer(targetUrl);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("already holds data");
    expect(run.stderr).toContain("sync_runs");
    expect(`${run.stdout}${run.stderr}`).not.toContain(PASSWORD);
    expect(await dumpAll(target.sql)).toEqual(before);
    const [after] = await target.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM pg_inherits`;
    expect(after!.n).toBe(parts!.n);
  }, 120_000);

  it("masks the password in what the server says back (a database named like it), exit 2", async () => {
    const url = new URL(targetUrl);
    url.pathname = `/${PASSWORD}-missing`;
    const run = await transfer(url.toString());
    expect(run.code, run.stderr).toBe(2);
    // The server's own message, masked: `database "***-missing" does not exist`.
    expect(run.stderr).toContain('"***-missing" does not exist');
    expect(`${run.stdout}${run.stderr}`).not.toContain(PASSWORD);
  }, 120_000);
});
