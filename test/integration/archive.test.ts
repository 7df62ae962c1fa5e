// Tiering to Parquet (issue 41 items 1-3) through the real binary, on Postgres and on the embedded
// database: a warehouse with an old month and a recent one, pruned with APM_ARCHIVE set. DuckDB
// (an independent reader) finds the files equal to the rows dropped, per project; a backfill and a
// sync afterwards send no request for the archived windows; the query of docs/archive.md reads
// archive and warehouse together; restore refuses a month holding rows or not archived, then
// gives back the rows as they were before the prune, and each window's status (a failed window and
// one cut by the record cap stay so).
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DuckDBInstance } from "@duckdb/node-api";
import type postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensurePartitions } from "../../src/db/partitions/ensurePartitions.ts";
import { partitionCache } from "../../src/db/partitions/partitionCache.ts";
import { type Sandbox, startSandbox } from "../../src/sandbox/index.ts";
import { migrateDatabase } from "../../src/warehouse/migrate.ts";
import { retentionStart } from "../../src/warehouse/retention.ts";
import { monthStart } from "../../src/windows/months.ts";
import { runCli } from "../support/child-sync.ts";
import { cliWarehouse, records } from "../support/cli-warehouse.ts";
import { DATABASES } from "../support/databases.ts";
import { DAY, runEngine } from "../support/engine-harness.ts";
import { checksums } from "../support/ledger-checks.ts";
import { HOUR, retentionDays } from "../support/time.ts";

const STREAMS = ["stat.transaction", "stat.error"];
const TABLES = ["stat_transaction", "stat_error"];
const MEASURE: Record<string, string> = {
  stat_transaction: 'sum("count")::float8 AS calls, sum(time_sum) AS time_sum',
  stat_error: 'sum("count")::float8 AS calls',
};
const month = (ms: number) => new Date(ms).toISOString().slice(0, 7);

/** Per project: rows and the table's measures, of the rows before `until` (Postgres). */
const pgSums = (sql: postgres.Sql, table: string, until: number) =>
  sql.unsafe<Record<string, number>[]>(
    `SELECT pcode::float8 AS pcode, count(*)::float8 AS rows, ${MEASURE[table]} FROM ${table} WHERE window_start < $1 GROUP BY 1 ORDER BY 1`,
    [new Date(until).toISOString()],
  );

/** The same of the table's archive, read by DuckDB. */
async function duckSums(dir: string, table: string): Promise<Record<string, number>[]> {
  const duck = await (await DuckDBInstance.create(":memory:")).connect();
  const measures = MEASURE[table]!.replace('sum("count")::float8', 'sum("count")::DOUBLE');
  const r = await duck.runAndReadAll(
    `SELECT pcode::DOUBLE AS pcode, count(*)::DOUBLE AS rows, ${measures}
     FROM read_parquet('${dir}/${table}/*/*.parquet', hive_partitioning = true) GROUP BY 1 ORDER BY 1`,
  );
  return r.getRowObjectsJS() as Record<string, number>[];
}

describe.each(DATABASES)("archive to Parquet and restore on %s", (kind) => {
  let sandbox: Sandbox;
  let wh: Awaited<ReturnType<typeof cliWarehouse>>;
  let dir: string;
  const now = Date.now();
  // A day (two when one would start on a month's last day): the CLI reads its own clock, and the
  // first kept month must be the one computed here even if the next UTC midnight strikes meanwhile.
  const days = retentionDays(now, 1);
  const RETENTION = `stat=${days}d`;
  const keptFrom = monthStart(retentionStart(now, days * DAY));
  const old = { from: keptFrom - DAY, to: keptFrom };
  const before: { sums: Record<string, Record<string, number>[]>; rows: Record<string, string>; views: unknown; ledger: unknown } = {
    sums: {},
    rows: {},
    views: null,
    ledger: null,
  };
  const cli = (args: string[], extra: Record<string, string> = {}) =>
    runCli([...args, "--log-format", "json"], { ...wh.env, APM_ARCHIVE: dir, ...extra }, { timeoutMs: 120_000 });
  const api = () => ({
    APM_BASE_URL: sandbox.url,
    APM_PROJECTS: sandbox.projects.map((p) => `${p.pcode}:${p.token}`).join(","),
    APM_RPS: "1000",
  });
  /** Every row before the retention (the archived month), every column, as a count and a digest of their text. */
  const oldRows = async (sql: postgres.Sql) => {
    const out: Record<string, string> = {};
    for (const t of TABLES) {
      const [r] = await sql.unsafe<{ n: number; sum: string }[]>(
        `SELECT count(*)::int AS n, md5(string_agg(t::text, E'\\n' ORDER BY t::text)) AS sum FROM ${t} t WHERE window_start < $1`,
        [new Date(keptFrom).toISOString()],
      );
      out[t] = `${r!.n}:${r!.sum}`;
    }
    return out;
  };
  /** Every ledger window of the archived month with its status. */
  const ledgerOf = (sql: postgres.Sql) =>
    sql`SELECT stream, pcode::float8 AS pcode, window_start, status FROM sync_windows WHERE window_start < ${new Date(keptFrom)}
        ORDER BY 1, 2, 3`;
  const views = (sql: postgres.Sql) =>
    sql.unsafe(
      `SELECT pcode::float8 AS pcode, bucket_start, service_hash::text AS service, count::float8 AS count, time_sum, coverage
       FROM stat_transaction_hourly WHERE bucket_start < $1 ORDER BY 1, 2, 3`,
      [new Date(keptFrom).toISOString()],
    );

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "apm-archive-"));
    sandbox = await startSandbox({ seed: 41, projects: 2, burstKeys: 0 });
    wh = await cliWarehouse(kind);
    await wh.use(async (sql, db) => {
      await migrateDatabase(db);
      const project = { baseUrl: sandbox.url, projects: sandbox.projects, database: db, now: () => now, env: { APM_GRAIN: "1h" } };
      for (const range of [old, { from: now - 3 * HOUR, to: now }]) {
        const mode = { kind: "backfill" as const, ...range };
        expect((await runEngine(project, { command: "backfill", mode, streams: STREAMS })).exitCode).toBe(0);
      }
      // Two windows of the old month as a backfill can leave them: one failed (no rows), one cut
      // by the record cap (stored as it came).
      const failed = { from: new Date(old.from + 2 * HOUR), to: new Date(old.from + 3 * HOUR) };
      await sql`UPDATE sync_windows SET status = 'failed', error = 'HTTP 503' WHERE stream = 'stat.error' AND window_start = ${failed.from}`;
      await sql`DELETE FROM stat_error WHERE window_start >= ${failed.from} AND window_start < ${failed.to}`;
      await sql`UPDATE sync_windows SET status = 'truncated' WHERE stream = 'stat.transaction' AND window_start = ${new Date(old.from + 5 * HOUR)}`;
      for (const t of TABLES) before.sums[t] = await pgSums(sql, t, keptFrom);
      before.rows = await oldRows(sql);
      before.ledger = await ledgerOf(sql);
      before.views = await views(sql);
    });
  }, 300_000);
  afterAll(async () => {
    await sandbox?.stop();
    await wh?.drop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("prune writes each dropped month as Parquet that DuckDB reads equal to the rows dropped; the windows are archived", async () => {
    expect(before.sums.stat_transaction!.length).toBe(2);
    expect(before.sums.stat_error!.every((r) => r.rows! > 0)).toBe(true);
    const sizes = await wh.use(
      (sql) =>
        sql<
          { bytes: number }[]
        >`SELECT pg_total_relation_size(${`stat_transaction_p${month(old.from).replace("-", "_")}`}::regclass)::float8 AS bytes`,
    );
    // A dry run says what would be archived, and writes nothing.
    const dry = await cli(["prune", "--dry-run"], { APM_RETENTION: RETENTION });
    expect(dry.code, dry.stderr).toBe(0);
    for (const t of TABLES)
      expect(
        records(dry.stdout, "prune").find((l) => l.table === t),
        t,
      ).toMatchObject({ toArchive: 1, archived: [] });
    expect(await readdir(dir)).toEqual([]);
    const pruned = await cli(["prune"], { APM_RETENTION: RETENTION });
    expect(pruned.code, pruned.stderr).toBe(0);
    for (const t of TABLES) {
      const line = records(pruned.stdout, "prune").find((l) => l.table === t)!;
      const files = line.archived as { month: string; path: string; rows: number; bytes: number }[];
      expect(files.map((f) => [f.month, f.path])).toEqual([[month(old.from), `${t}/month=${month(old.from)}/part-0.parquet`]]);
      expect(await duckSums(dir, t), t).toEqual(before.sums[t]);
      if (t === "stat_transaction")
        process.stdout.write(
          `archive size (${kind}): partition ${sizes[0]!.bytes} bytes, Parquet ${files[0]!.bytes} bytes, ${files[0]!.rows} rows\n`,
        );
    }
    const [ledger, archives, left] = await wh.use(async (sql) => [
      await sql`SELECT stream, status, count(*)::int AS n FROM sync_windows WHERE window_start < ${new Date(keptFrom)} GROUP BY 1, 2 ORDER BY 1, 2`,
      await sql`SELECT table_name, rows::int AS rows FROM archives ORDER BY 1`,
      await sql`SELECT count(*)::int AS n FROM stat_transaction WHERE window_start < ${new Date(keptFrom)}`,
    ]);
    expect([...ledger]).toEqual(
      STREAMS.map((stream) => ({ stream, status: "archived", n: 24 * 2 })).sort((a, b) => a.stream.localeCompare(b.stream)),
    );
    expect([...archives].map((a) => a.table_name)).toEqual(["stat_error", "stat_transaction"]);
    expect(left[0]!.n).toBe(0);
    // The rollups keep the dropped month's hours, as a plain prune does.
    expect(await wh.use(views)).toEqual(before.views);

    const status = await runCli(["status", "--log-format", "plain"], wh.env);
    expect(status.stdout).toContain(`archived months`);
    expect(status.stdout).toMatch(new RegExp(`${month(old.from)} .* in 2 file\\(s\\): stat_error, stat_transaction`));
    const json = await runCli(["status", "--json"], wh.env);
    const statusModel = JSON.parse(json.stdout) as { archives: { table: string; month: string }[] };
    expect(statusModel.archives.map((a) => [a.table, a.month])).toEqual([
      ["stat_error", month(old.from)],
      ["stat_transaction", month(old.from)],
    ]);
    const report = await cli(["report", "--json", "--from", "60d"]);
    const model = JSON.parse(report.stdout.split("\n").find((l) => l.includes('"archives"'))!) as {
      archives: { table: string; month: string }[];
    };
    expect(model.archives.map((a) => [a.table, a.month])).toEqual(
      TABLES.slice()
        .sort()
        .map((t) => [t, month(old.from)]),
    );
  }, 120_000);

  it("a backfill and a sync afterwards send no request for the archived windows", async () => {
    sandbox.clearLog();
    const backfill = await cli(
      ["backfill", "--from", new Date(old.from).toISOString(), "--to", new Date(old.to).toISOString(), "--streams", STREAMS.join(",")],
      api(),
    );
    expect(backfill.code, backfill.stderr).toBe(0);
    expect(records(backfill.stdout, "complete windows skipped")[0]).toMatchObject({ complete: 2 * 2 * 24 });
    expect(sandbox.requestLog.filter((r) => r.opId !== null && STREAMS.includes(r.opId))).toEqual([]);
    // A sync early in the next month (the engine's clock): its lookback reaches into the archived
    // day, its first windows follow it; it fetches those, never the archived hours.
    const early = keptFrom + 3 * HOUR;
    const sync = await wh.use(async (_sql, db) => {
      const env = { APM_START: new Date(old.from).toISOString() };
      const project = { baseUrl: sandbox.url, projects: sandbox.projects, database: db, now: () => early, env };
      return runEngine(project, { command: "sync", mode: { kind: "sync" }, streams: STREAMS });
    });
    expect(sync.exitCode).toBe(0);
    const stat = sandbox.requestLog.filter((r) => r.opId !== null && STREAMS.includes(r.opId));
    expect(stat.length).toBeGreaterThan(0);
    expect(stat.filter((r) => r.stime !== null && r.stime < keptFrom)).toEqual([]);
  }, 120_000);

  it("the query of docs/archive.md reads archive and warehouse together", async () => {
    const doc = await readFile(join(import.meta.dirname, "../../docs/archive.md"), "utf8");
    const query = /```sql archive-query\n([\s\S]*?)```/.exec(doc)![1]!.replace("/mnt/apm-archive", dir);
    const recent = await wh.use((sql) =>
      sql.unsafe<{ pcode: string; window_start: string; count: string | null; time_sum: number | null }[]>(
        `SELECT pcode::text, window_start::text, "count"::text, time_sum FROM stat_transaction WHERE window_start >= $1`,
        [new Date(keptFrom).toISOString()],
      ),
    );
    const duck = await (await DuckDBInstance.create(":memory:")).connect();
    await duck.run(`ATTACH ':memory:' AS wh; CREATE SCHEMA wh.apm;
      CREATE TABLE wh.apm.stat_transaction (pcode BIGINT, window_start TIMESTAMPTZ, "count" BIGINT, time_sum DOUBLE)`);
    const insert = await duck.prepare("INSERT INTO wh.apm.stat_transaction VALUES ($1::BIGINT, $2::TIMESTAMPTZ, $3::BIGINT, $4::DOUBLE)");
    for (const r of recent) {
      insert.bindVarchar(1, r.pcode);
      insert.bindVarchar(2, r.window_start);
      if (r.count === null) insert.bindNull(3);
      else insert.bindVarchar(3, r.count);
      if (r.time_sum === null) insert.bindNull(4);
      else insert.bindDouble(4, r.time_sum);
      await insert.run();
    }
    const got = (await duck.runAndReadAll(query))
      .getRowObjectsJS()
      .map((r) => ({ ...r, pcode: Number(r.pcode), rows: Number(r.rows), calls: Number(r.calls) }));
    const expected = await wh.use((sql) =>
      sql.unsafe(
        `SELECT to_char(window_start AT TIME ZONE 'UTC', 'YYYY-MM') AS month, pcode::float8 AS pcode, count(*)::float8 AS rows,
           sum("count")::float8 AS calls, sum(time_sum) AS time_sum FROM stat_transaction WHERE window_start >= $1 GROUP BY 1, 2 ORDER BY 1, 2`,
        [new Date(keptFrom).toISOString()],
      ),
    );
    const archived = before.sums.stat_transaction!.map((r) => ({ month: month(old.from), ...r }));
    expect(got).toEqual([...archived, ...expected].map((r) => ({ ...r })));
  }, 60_000);

  it("restore refuses bad months, months not archived and months holding rows (exit 2, nothing written), then gives the rows back", async () => {
    const bad = await cli(["restore", "--months", "2026-13,26-01"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain(String.raw`--months: \"2026-13\", \"26-01\" is not a month as YYYY-MM`);
    const unset = await runCli(["restore", "--months", month(old.from)], wh.env);
    expect(unset.code).toBe(2);
    expect(unset.stderr).toMatch(/APM_ARCHIVE/);
    const notArchived = await cli(["restore", "--months", month(old.from - 400 * DAY)]);
    expect(notArchived.code).toBe(2);
    expect(notArchived.stderr).toMatch(/is not archived/);

    // A row written into the archived month since (here by hand): restoring would double it.
    const table = "stat_transaction";
    await wh.use(async (sql) => {
      partitionCache(sql, table).forget();
      await ensurePartitions(sql, table, [old.from]);
      await sql.unsafe(`INSERT INTO ${table} (pcode, window_start, window_end, service_hash) VALUES (1, $1, $2, 7)`, [
        new Date(old.from).toISOString(),
        new Date(old.from + HOUR).toISOString(),
      ]);
    });
    const state = (sql: postgres.Sql) => checksums(sql, ["archives", "sync_windows", "stat_error", "stat_transaction"]);
    const held = await wh.use(state);
    const refused = await cli(["restore", "--months", month(old.from)]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/stat_transaction .* holds 1 row\(s\) already/);
    expect(await wh.use(state)).toEqual(held);
    await wh.use((sql) => sql.unsafe(`DELETE FROM ${table} WHERE window_start < $1`, [new Date(keptFrom).toISOString()]));

    const restored = await cli(["restore", "--months", month(old.from)]);
    expect(restored.code, restored.stderr).toBe(0);
    expect(records(restored.stdout, "restored").map((r) => r.table)).toEqual(["stat_error", "stat_transaction"]);
    const [rows, ledger, archives, hours] = await wh.use(async (sql) => [
      await oldRows(sql),
      await ledgerOf(sql),
      await sql`SELECT count(*)::int AS n FROM archives`,
      await views(sql),
    ]);
    expect(rows).toEqual(before.rows);
    // Each window as it was before the prune: done, the failed one failed, the cut one truncated.
    expect([...ledger]).toEqual([...(before.ledger as postgres.Row[])]);
    expect(new Set([...ledger].map((w) => w.status))).toEqual(new Set(["done", "failed", "truncated"]));
    expect(archives[0]!.n).toBe(0);
    expect(hours).toEqual(before.views);
  }, 120_000);
});
