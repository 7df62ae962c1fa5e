// `apm-sync verify` through the CLI: an honest copy exits 0 and records a verifications row;
// after the sandbox restates its hours (the `restate` hostile mode: the first record of each
// answer counts one call more) it exits 1 naming each window that differs, with its rows and
// measure stored and served, and the stored rows, the ledger and the restatements stay as they
// were. On Postgres and on the embedded database.
import { readFileSync, rmSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase } from "../../src/db/driver/connect.ts";
import { cliEnv, runCli } from "../support/child-sync.ts";
import { type EngineHarness, HOUR, startEngineHarness, tableChecksum } from "../support/engine-harness.ts";

// The real clock (to the hour): the CLI child keeps real time.
const NOW = Math.floor(Date.now() / HOUR) * HOUR;
const FROM = NOW - 4 * HOUR;
const TO = NOW - HOUR;
const RESTATED = FROM + HOUR;
const iso = (ms: number) => new Date(ms).toISOString();
const STREAMS = "stat.transaction,stat.sql";
const range = (from: number, to: number) => ["--from", iso(from), "--to", iso(to)];

/** What verify must leave as it found it: the stored rows, the ledger, the restatements, the quarantine. */
async function untouched(sql: postgres.Sql): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const t of ["stat_transaction", "stat_sql", "sync_windows", "restatements", "quarantine", "watermarks"])
    out[t] = await tableChecksum(sql, t);
  return out;
}

const verifications = (sql: postgres.Sql) =>
  sql<{ checked: number; differing: number; failed: number; start: Date; end: Date }[]>`
    SELECT windows_checked AS checked, windows_differing AS differing, windows_failed AS failed,
      range_start AS start, range_end AS end FROM verifications ORDER BY id`;

/** Reads the database of the case (the embedded one is opened for it: the CLI children hold it while they run). */
type Read = <T>(fn: (sql: postgres.Sql) => Promise<T>) => Promise<T>;

/** The whole case on one database: `env` reaches it. */
async function verifyCase(h: EngineHarness, env: Record<string, string>, read: Read) {
  const backfill = await runCli(["backfill", ...range(FROM, TO), "--streams", STREAMS], env);
  expect(backfill.code, backfill.stderr).toBe(0);
  const pcode = h.pcodes[0]!;

  const honest = await runCli(["verify", ...range(FROM, TO), "--streams", STREAMS], env);
  expect(honest.code, honest.stderr).toBe(0);
  expect(honest.stdout).toContain(`verify: 6 windows checked in ${iso(FROM)} .. ${iso(TO)}: 6 agree, 0 differ`);
  expect(honest.stdout).not.toContain("differs:");
  const [first, before] = await read(async (sql) => [await verifications(sql), await untouched(sql)] as const);
  expect(first).toEqual([{ checked: 6, differing: 0, failed: 0, start: new Date(FROM), end: new Date(TO) }]);
  expect(Number(before.stat_transaction!.split(":")[0])).toBeGreaterThan(0);

  // The server revises its statistics: the restated hour's window differs, named with both sums.
  h.sandbox.setHostile({ modes: ["restate"], ops: ["stat.transaction"] });
  const one = await runCli(["verify", ...range(RESTATED, RESTATED + HOUR), "--streams", "stat.transaction"], env);
  expect(one.code, one.stderr).toBe(1);
  const [[stored], after] = await read(async (sql) => {
    const sums = await sql<{ n: number; rows: number }[]>`
      SELECT sum(count)::float8 AS n, count(*)::int AS rows FROM stat_transaction
      WHERE pcode = ${pcode} AND window_start >= ${iso(RESTATED)} AND window_end <= ${iso(RESTATED + HOUR)}`;
    return [sums, await untouched(sql)] as const;
  });
  expect(stored!.rows).toBeGreaterThan(0);
  expect(one.stdout).toContain(
    `differs: stat.transaction pcode=${pcode} ${iso(RESTATED)}..${iso(RESTATED + HOUR)}: ` +
      `rows ${stored!.rows} stored, ${stored!.rows} served; count ${stored!.n} stored, ${stored!.n + 1} served`,
  );
  expect(one.stdout).toContain("1 window checked");
  expect(one.stdout).toContain("0 agree, 1 differs");
  expect(after).toEqual(before);

  // The whole range, a sample of it: only the restated stream's windows differ.
  const all = await runCli(["verify", ...range(FROM, TO), "--streams", STREAMS, "--sample", "4"], env);
  expect(all.code, all.stderr).toBe(1);
  expect(all.stdout).toContain("4 windows checked (a sample of 6 done)");
  const named = all.stdout.split("\n").filter((l) => l.startsWith("differs: "));
  expect(named.length).toBeGreaterThan(0);
  expect(named.every((l) => l.startsWith("differs: stat.transaction "))).toBe(true);
  expect(all.stdout).toContain(`${4 - named.length} agree, ${named.length} differ`);
  const [last, rows] = await read(async (sql) => [await untouched(sql), await verifications(sql)] as const);
  expect(last).toEqual(before);
  expect(rows.map((v) => [v.checked, v.differing])).toEqual([
    [6, 0],
    [1, 1],
    [4, named.length],
  ]);
}

describe("verify on Postgres", () => {
  let h: EngineHarness;
  beforeAll(async () => {
    h = await startEngineHarness({ now: NOW, projects: 1, burstKeys: 0 });
  });
  afterAll(async () => h?.close());

  it("exits 0 for an honest copy, 1 naming the restated window, and changes nothing", async () => {
    const env = cliEnv({ baseUrl: h.sandbox.url, databaseUrl: h.db.url, projects: h.sandbox.projects });
    await verifyCase(h, env, (fn) => fn(h.sql));
    // status says when the copy was last proven, over which range, and what differed.
    const status = await runCli(["status"], env);
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toMatch(
      /last verification: #3 finished .+ over .+: 4 window\(s\) checked, [1-4] differing \(`apm-sync verify` names them/,
    );
    const json = JSON.parse((await runCli(["status", "--json"], env)).stdout) as { lastVerification: Record<string, unknown> };
    expect(json.lastVerification).toMatchObject({ id: 3, from: FROM, to: TO, checked: 4, failed: 0 });
    // The report's runs area says it too, and its JSON carries it.
    const report = await runCli(["report", "--json"], env);
    const model = JSON.parse(report.stdout) as { lastVerification: Record<string, unknown> };
    expect(model.lastVerification).toMatchObject({ id: 3, from: iso(FROM), to: iso(TO), checked: 4, failed: 0 });
    const page = join(tmpdir(), `apm-verify-${process.pid}.html`);
    expect((await runCli(["report", "--out", page], env)).code).toBe(0);
    expect(readFileSync(page, "utf8")).toMatch(
      /Last verification: #3, finished .+ 4 windows checked, <span class="status-partial">[1-4] differing/,
    );
    rmSync(page, { force: true });
  }, 300_000);
});

describe("verify on the embedded database", () => {
  let h: EngineHarness;
  let dir: string;
  beforeAll(async () => {
    h = await startEngineHarness({ now: NOW, projects: 1, burstKeys: 0 });
    dir = await mkdtemp(join(tmpdir(), "apm-verify-"));
  });
  afterAll(async () => {
    await h?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("exits 0 for an honest copy, 1 naming the restated window, and changes nothing", async () => {
    const { DATABASE_URL: _, ...env } = cliEnv({ baseUrl: h.sandbox.url, databaseUrl: "", projects: h.sandbox.projects });
    const read: Read = async (fn) => {
      const embedded = await openDatabase({ databaseUrl: null, dataDir: dir, dbSchema: "apm" });
      try {
        return await fn(embedded.sql);
      } finally {
        await embedded.close();
      }
    };
    await verifyCase(h, { ...env, APM_DATA_DIR: dir }, read);
  }, 600_000);
});
