// Retention (issue 18 item 3) through the real binary, on Postgres and on the embedded database:
// 75 days of statistics, `prune` with stat=30d (31d on the days 30 would start on a month's last
// day). --dry-run changes nothing; prune drops every month the retention no longer keeps (rows and
// bytes printed, the tables' size falls by exactly those bytes), keeps the last 30 days equal to
// the sandbox's ground truth, marks the dropped windows pruned, and a second prune changes nothing.
// status and report show the time as pruned, a backfill into it exits 2 before any request, and a
// sync prunes at its end.
import type postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Sandbox, startSandbox } from "../../src/sandbox/index.ts";
import { migrateDatabase } from "../../src/warehouse/migrate.ts";
import { retentionStart } from "../../src/warehouse/retention.ts";
import { addMonths, monthStart } from "../../src/windows/months.ts";
import { runCli } from "../support/child-sync.ts";
import { cliWarehouse, records } from "../support/cli-warehouse.ts";
import { DATABASES } from "../support/databases.ts";
import { checksums, DAY, dbCountsByKey, runEngine, truthCountsByKey } from "../support/engine-harness.ts";
import { HOUR, retentionDays } from "../support/time.ts";

const STATS = ["stat.transaction", "stat.sql", "stat.httpc", "stat.error", "stat.remote"];
const TABLES = STATS.map((s) => s.replace(".", "_"));

/** Each table's partitions, total size (pg_total_relation_size of its partitions) and oldest row. */
async function sizes(sql: postgres.Sql) {
  const out: Record<string, { partitions: number; bytes: number; oldest: number | null }> = {};
  for (const t of TABLES) {
    const [r] = await sql.unsafe<{ partitions: number; bytes: number; oldest: number | null }[]>(
      `SELECT (SELECT count(*)::int FROM pg_inherits WHERE inhparent = '${t}'::regclass) AS partitions,
        (SELECT coalesce(sum(pg_total_relation_size(inhrelid)), 0)::float8 FROM pg_inherits WHERE inhparent = '${t}'::regclass) AS bytes,
        (SELECT (extract(epoch from min(window_start)) * 1000)::float8 FROM ${t}) AS oldest`,
    );
    out[t] = r!;
  }
  return out;
}

const everything = (sql: postgres.Sql) => checksums(sql, [...TABLES, "sync_windows"]);

/** What the statistics' hourly and daily views show before `until`: rows and a digest of them. */
const viewsBefore = (sql: postgres.Sql, until: number) =>
  Promise.all(
    TABLES.flatMap((t) => ["hourly", "daily"].map((grain) => `${t}_${grain}`)).map(async (view) => {
      const [r] = await sql.unsafe<{ rows: number; digest: string }[]>(
        `SELECT count(*)::int AS rows, md5(string_agg(concat_ws(' ', pcode, bucket_start, count, windows, coverage), ',' ORDER BY v::text)) AS digest
         FROM ${view} AS v WHERE bucket_start < $1::timestamptz`,
        [new Date(until).toISOString()],
      );
      return { view, ...r! };
    }),
  );

describe.each(DATABASES)("retention and prune on %s", (kind) => {
  let sandbox: Sandbox;
  let wh: Awaited<ReturnType<typeof cliWarehouse>>;
  let pcode: number;
  const now = Date.now();
  // 30 days (31 when 30 would start on a month's last day): the CLI reads its own clock, and the
  // first kept month must be the one computed here even if the next UTC midnight strikes meanwhile.
  const days = retentionDays(now, 30);
  const RETENTION = days * DAY;
  const keep = (key: string) => `${key}=${days}d`;
  const keptFrom = monthStart(retentionStart(now, RETENTION));
  // The backfill's days: enough for two months or more before the first kept one, whatever the date.
  const SPAN = 75 * DAY;
  // A day in a dropped month (the first kept month starts less than 61 days back).
  const OPEN_DAY = Math.floor((now - 65 * DAY) / DAY) * DAY;
  const iso = (ms: number) => new Date(ms).toISOString();
  const cli = (args: string[], extra: Record<string, string> = {}) =>
    runCli([...args, "--log-format", "json"], { ...wh.env, APM_RETENTION: keep("stat"), ...extra }, { timeoutMs: 180_000 });

  beforeAll(async () => {
    sandbox = await startSandbox({ seed: 11, projects: 1, burstKeys: 0 });
    pcode = sandbox.projects[0]!.pcode;
    wh = await cliWarehouse(kind);
    await wh.use(async (_sql, db) => {
      await migrateDatabase(db);
      const env = { APM_GRAIN: "1d" };
      const project = { baseUrl: sandbox.url, projects: sandbox.projects, database: db, now: () => now, env };
      const mode = { kind: "backfill" as const, from: now - SPAN, to: now };
      expect((await runEngine(project, { command: "backfill", mode, streams: STATS })).exitCode).toBe(0);
    });
    // One old day fetched again in part (reset, then its first 12 hours by the hour): it stays open.
    const reset = await runCli(
      ["reset", "--streams", "stat.transaction", "--from", iso(OPEN_DAY), "--to", iso(OPEN_DAY + DAY), "--drop-rows"],
      wh.env,
    );
    expect(reset.code, reset.stderr).toBe(0);
    await wh.use(async (_sql, db) => {
      const project = { baseUrl: sandbox.url, projects: sandbox.projects, database: db, now: () => now, env: { APM_GRAIN: "1h" } };
      const mode = { kind: "backfill" as const, from: OPEN_DAY, to: OPEN_DAY + 12 * HOUR };
      expect((await runEngine(project, { command: "backfill", mode, streams: ["stat.transaction"] })).exitCode).toBe(0);
    });
  }, 300_000);
  afterAll(async () => {
    await sandbox?.stop();
    await wh?.drop();
  });

  it("drops the months the retention no longer keeps, with rows and bytes; the rest stays exact; a second prune changes nothing", async () => {
    const [before, sizeBefore, shownBefore] = await wh.use(
      async (sql) => [await everything(sql), await sizes(sql), await viewsBefore(sql, keptFrom)] as const,
    );
    // A partition for every month the backfill touches: three to four, by the date.
    const first = monthStart(now - SPAN);
    let touched = 0;
    for (let m = first; m <= monthStart(now); m = addMonths(m, 1)) touched++;
    expect(sizeBefore.stat_sql!.partitions).toBeGreaterThanOrEqual(Math.max(touched, 3));
    // The backfill reached back into the first of them.
    expect(sizeBefore.stat_sql!.oldest).toBeLessThan(addMonths(first, 1));
    expect(shownBefore.every((v) => v.rows > 0)).toBe(true);

    const dry = await cli(["prune", "--dry-run"]);
    expect(dry.code, dry.stderr).toBe(0);
    const planned = records(dry.stdout, "prune").filter((r) => TABLES.includes(r.table as string));
    expect(planned.every((r) => (r.rows as number) > 0 && (r.bytes as number) > 0 && r.dryRun === true)).toBe(true);
    expect(await wh.use(everything)).toEqual(before);

    const pruned = await cli(["prune"]);
    expect(pruned.code, pruned.stderr).toBe(0);
    expect(pruned.durationMs).toBeLessThan(30_000);
    const lines = records(pruned.stdout, "prune");
    const [after, ledger] = await wh.use(async (sql) => {
      const stored = await sizes(sql);
      for (const t of TABLES) {
        const line = lines.find((l) => l.table === t)!;
        expect(line, t).toMatchObject({ keptFrom: new Date(keptFrom).toISOString(), retention: keep("stat"), dryRun: false });
        expect(line.bytes, t).toBe(planned.find((p) => p.table === t)!.bytes);
        // The size falls by exactly what was dropped; nothing older than the retention plus one partition remains.
        expect(stored[t]!.bytes, t).toBe(sizeBefore[t]!.bytes - (line.bytes as number));
        expect(stored[t]!.partitions, t).toBe(sizeBefore[t]!.partitions - (line.partitions as unknown[]).length);
        expect(stored[t]!.oldest, t).toBeGreaterThanOrEqual(keptFrom);
        // ... and the month holding the retention's start is kept whole (its rows are still there).
        expect(stored[t]!.oldest, t).toBeLessThan(addMonths(keptFrom, 1));
      }
      const statuses = await sql<{ pruned: boolean; status: string; n: number }[]>`
        SELECT window_start < ${new Date(keptFrom)} AS pruned, status, count(*)::int AS n FROM sync_windows GROUP BY 1, 2 ORDER BY 1, 2`;
      return [await everything(sql), statuses] as const;
    });
    // The rollups keep what the views showed of the dropped months (their hours and marked days were
    // read from the raw rows): the same rows, the same values.
    expect(await wh.use((sql) => viewsBefore(sql, keptFrom))).toEqual(shownBefore);
    expect(ledger).toEqual([
      { pruned: false, status: "done", n: expect.any(Number) },
      { pruned: true, status: "pruned", n: lines.reduce((n, l) => n + (l.windows as number), 0) },
    ]);
    // The retention's last days are the ground truth, key by key.
    await wh.use(async (sql) => {
      const [{ end }] = (await sql`SELECT (extract(epoch from max(window_end)) * 1000)::float8 AS end FROM sync_windows`) as unknown as [
        { end: number },
      ];
      const from = retentionStart(now, RETENTION);
      for (const op of STATS)
        expect(await dbCountsByKey(sql, op, pcode, from, end), op).toEqual(truthCountsByKey(sandbox.truth, pcode, op, from, end));
    });

    const again = await cli(["prune"]);
    expect(again.code, again.stderr).toBe(0);
    expect(records(again.stdout, "prune total")[0]).toMatchObject({ partitions: 0, rows: 0, bytes: 0 });
    expect(await wh.use(everything)).toEqual(after);
  }, 300_000);

  it("status and report show the pruned time as pruned, a backfill into it exits 2 before any request, a sync prunes at its end", async () => {
    const status = await cli(["status", "--json"]);
    expect(status.code, status.stderr).toBe(0);
    const model = JSON.parse(status.stdout.split("\n").find((l) => l.includes('"streams"'))!) as {
      streams: { stream: string; prunedWindows: number; prunedUntil: string | null }[];
    };
    for (const s of model.streams.filter((x) => STATS.includes(x.stream)))
      expect(s, s.stream).toMatchObject({ prunedWindows: expect.any(Number), prunedUntil: new Date(keptFrom).toISOString() });

    const report = await cli(["report", "--json", "--from", "75d"]);
    expect(report.code, report.stderr).toBe(0);
    const cells = (
      JSON.parse(report.stdout.split("\n").find((l) => l.includes('"coverage"'))!) as { coverage: { bucketStart: string; state: string }[] }
    ).coverage;
    const old = cells.filter((c) => Date.parse(c.bucketStart) + DAY <= keptFrom);
    expect(old.length).toBeGreaterThan(40);
    // The day of stat.transaction fetched in part (beforeAll) was never fetched whole: its other
    // hours are missing; the other statistics' cells of that day are pruned.
    const part = (c: { bucketStart: string }) => Date.parse(c.bucketStart) === OPEN_DAY;
    expect(new Set(old.filter((c) => !part(c)).map((c) => c.state))).toEqual(new Set(["pruned"]));
    expect(
      old
        .filter(part)
        .map((c) => c.state)
        .sort(),
    ).toEqual(["partly missing", ...STATS.slice(1).map(() => "pruned")]);

    const api = { APM_BASE_URL: sandbox.url, APM_PROJECTS: `${pcode}:${sandbox.projects[0]!.token}`, APM_RPS: "1000" };
    sandbox.clearLog();
    const refused = await cli(["backfill", "--from", "100d", "--to", "90d", "--streams", "stat"], api);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/APM_RETENTION/);
    expect(refused.stderr).toContain(`stat.sql (${keep("stat")})`);
    expect(sandbox.requestLog).toHaveLength(0);

    const sync = await cli(["sync", "--streams", "stat.remote"], { ...api, APM_START: "2h" });
    expect(sync.code, sync.stderr).toBe(0);
    expect(records(sync.stdout, "prune total")).toEqual([expect.objectContaining({ partitions: 0 })]);
  }, 300_000);

  it("rollup.hourly=30d drops the hourly rollups' old months; daily rollups, coverage and the refreshed day's rows stay", async () => {
    const counts = (sql: postgres.Sql) =>
      sql<{ grain: string; old: number; kept: number }[]>`
        SELECT grain, count(*) FILTER (WHERE bucket_start < ${new Date(keptFrom)})::int AS old,
          count(*) FILTER (WHERE bucket_start >= ${new Date(keptFrom)})::int AS kept
        FROM rollup_coverage GROUP BY 1 ORDER BY 1`;
    const before = await wh.use(counts);
    expect(
      before.every((c) => c.old > 0 && c.kept > 0),
      JSON.stringify(before),
    ).toBe(true);
    // The day fetched in part was open (its daily view read the raw rows): the first prune wrote it
    // into the daily rollup before its raw month went, and the view keeps it.
    const oldDays = (sql: postgres.Sql) =>
      sql<{ open: number; days: string }[]>`
        SELECT (SELECT count(*)::int FROM rollup_open_days WHERE bucket_start < ${new Date(keptFrom)}) AS open,
          (SELECT string_agg(concat_ws(' ', bucket_start, service_hash, count, time_sum, coverage), ',' ORDER BY bucket_start, service_hash)
           FROM stat_transaction_daily WHERE bucket_start < ${new Date(keptFrom)}) AS days`;
    const [open] = await wh.use(oldDays);
    expect(open!.open).toBe(0);
    expect(open!.days).toContain(new Date(OPEN_DAY).toISOString().slice(0, 10));
    const pruned = await cli(["prune"], { APM_RETENTION: `${keep("stat")},${keep("rollup.hourly")}` });
    expect(pruned.code, pruned.stderr).toBe(0);
    const lines = records(pruned.stdout, "prune");
    const hourly = lines.filter((l) => /^rollup_.*_hourly$/.test(l.table as string));
    expect(hourly.length).toBeGreaterThan(0);
    expect(hourly.every((l) => l.retention === keep("rollup.hourly") && l.windows === 0)).toBe(true);
    // The buckets' coverage keeps everything (rollup.daily has no retention here).
    expect(lines.find((l) => l.table === "rollup_coverage")).toBeUndefined();
    expect(before.map((c) => c.grain)).toEqual(["daily", "hourly"]);
    expect(await wh.use(counts)).toEqual(before);
    const [old] = await wh.use(
      (sql) => sql<{ n: number }[]>`SELECT count(*)::int AS n FROM rollup_stat_sql_hourly WHERE bucket_start < ${new Date(keptFrom)}`,
    );
    expect(old!.n).toBe(0);
    expect(await wh.use(oldDays)).toEqual([{ open: 0, days: open!.days }]);
  }, 300_000);

  it("rollup=30d then drops the rollups' old months and exactly the buckets' coverage rows before them", async () => {
    const days = (sql: postgres.Sql) =>
      sql<{ old: number; kept: number }[]>`
        SELECT count(*) FILTER (WHERE bucket_start < ${new Date(keptFrom)})::int AS old,
          count(*) FILTER (WHERE bucket_start >= ${new Date(keptFrom)})::int AS kept
        FROM rollup_coverage`;
    const [before] = await wh.use(days);
    expect(before!.old).toBeGreaterThan(0);
    const dry = await cli(["prune", "--dry-run"], { APM_RETENTION: `${keep("stat")},${keep("rollup")}` });
    expect(dry.code, dry.stderr).toBe(0);
    expect(records(dry.stdout, "prune").find((l) => l.table === "rollup_coverage")).toMatchObject({ deletedRows: before!.old });
    expect(await wh.use(days)).toEqual([before]);
    const pruned = await cli(["prune"], { APM_RETENTION: `${keep("stat")},${keep("rollup")}` });
    expect(pruned.code, pruned.stderr).toBe(0);
    expect(records(pruned.stdout, "prune").find((l) => l.table === "rollup_coverage")).toMatchObject({
      retention: keep("rollup"),
      deletedRows: before!.old,
    });
    expect(await wh.use(days)).toEqual([{ old: 0, kept: before!.kept }]);
    const [old] = await wh.use(
      (sql) => sql<{ n: number }[]>`SELECT count(*)::int AS n FROM rollup_stat_sql_daily WHERE bucket_start < ${new Date(keptFrom)}`,
    );
    expect(old!.n).toBe(0);
  }, 300_000);
});
