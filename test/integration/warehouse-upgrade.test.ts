// A warehouse made by the previous release (migrations up to 0003, no partitions) upgrades in place
// with `migrate`: every table's rows unchanged, keys, indexes, views, a user's view on a view and
// (embedded) a BI role's grants kept, a second migrate applies nothing, and the next sync writes into
// the partitions the migration made and is incremental. On Postgres and on the embedded database.
// The release of 0009 upgrades too: every hour and day of the statistics in their rollup tables, as
// that release kept them, becomes what this one keeps, with the same rows and coverage. And the
// release of 0014, whose open days the views computed when read: each becomes a mark, read from the
// raw rows until the refresher stores it.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Database, openDatabase } from "../../src/db/driver/connect.ts";
import { ROLLUPS } from "../../src/db/rollups/spec.ts";
import { partitionedTables } from "../../src/db/tables.ts";
import { type Sandbox, startSandbox } from "../../src/sandbox/index.ts";
import type { RequestLogEntry } from "../../src/sandbox/types.ts";
import { migrateDatabase } from "../../src/warehouse/migrate.ts";
import { DATABASES, type DatabaseKind, openTestDatabase } from "../support/databases.ts";
import { createTestDatabase } from "../support/db.ts";
import { runEngine, tableChecksum } from "../support/engine-harness.ts";
import { copyWarehouse, existingTables, migrationsUpTo } from "../support/previous-release.ts";
import { coverageDiffs, fillAsOlderRelease, refresh, rollupDiffs } from "../support/rollup-checks.ts";
import { HOUR } from "../support/time.ts";

// Twelve hours before 1 March 06:00: the data spans February and March.
const NOW = Date.UTC(2026, 2, 1, 6, 0);
const ENV = { APM_START: "12h" };

/** How far back (hours before NOW) the statistics' and ranges' requests of a sync reached. */
const reachedBack = (log: readonly RequestLogEntry[]) =>
  Math.max(...log.filter((r) => /^(stat|range)\./.test(r.opId ?? "") && r.stime !== null).map((r) => (NOW - r.stime!) / HOUR));

/** A database of `kind` with only the migrations up to `lastTag` applied (a previous release). */
async function previousRelease(
  kind: DatabaseKind,
  lastTag = "0003_worker_heartbeats",
): Promise<{ db: Database; drop: () => Promise<void> }> {
  const old = migrationsUpTo(lastTag);
  try {
    if (kind === "postgres") {
      const db = await createTestDatabase({ migrated: false });
      await migrateDatabase(db, old.folder);
      return { db, drop: () => db.drop() };
    }
    const dir = await mkdtemp(join(tmpdir(), "apm-upgrade-"));
    const db = await openDatabase({ databaseUrl: null, dataDir: dir, dbSchema: "apm" });
    await migrateDatabase(db, old.folder);
    const drop = async () => {
      await db.close();
      await rm(dir, { recursive: true, force: true });
    };
    return { db, drop };
  } finally {
    old.remove();
  }
}

/** Copies a warehouse into one of a release that partitioned its tables already: the months the rows need first. */
async function copyPartitioned(from: postgres.Sql, to: postgres.Sql): Promise<void> {
  const months = await from<{ child: string; parent: string; bound: string }[]>`
    SELECT c.relname AS child, p.relname AS parent, pg_get_expr(c.relpartbound, c.oid) AS bound
    FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid JOIN pg_class p ON p.oid = i.inhparent
    WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind = 'r'`;
  for (const m of months) await to.unsafe(`CREATE TABLE IF NOT EXISTS "${m.child}" PARTITION OF "${m.parent}" ${m.bound}`);
  await copyWarehouse(from, to);
}

/** The columns of `tables`, by table. */
async function columnsOf(sql: postgres.Sql, tables: readonly string[]): Promise<Record<string, string[]>> {
  const rows = await sql<{ t: string; c: string }[]>`
    SELECT table_name AS t, column_name AS c FROM information_schema.columns
    WHERE table_schema = current_schema() AND table_name = ANY(${tables as string[]}::text[])`;
  const out: Record<string, string[]> = Object.fromEntries(tables.map((t) => [t, []]));
  for (const r of rows) out[r.t]!.push(r.c);
  return out;
}

/**
 * Checksums of `tables`, every row and column; with `had` (the columns before a migration), of
 * those columns only: a column the migration added (and the test asserts apart) changes no row.
 */
async function checksumAll(sql: postgres.Sql, tables: readonly string[], had?: Record<string, string[]>) {
  const now = await columnsOf(sql, tables);
  const added = (t: string) => (had ? now[t]!.filter((c) => !had[t]!.includes(c)) : []);
  return Object.fromEntries(await Promise.all(tables.map(async (t) => [t, await tableChecksum(sql, t, added(t))])));
}

/** Keys, constraints and indexes of the warehouse tables by name (a partitioned index reads `ON ONLY`). */
async function shape(sql: postgres.Sql): Promise<string[]> {
  const rows = await sql<{ line: string }[]>`
    SELECT c.relname || ' ' || k.conname || ' ' || pg_get_constraintdef(k.oid) AS line
    FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid
    WHERE c.relnamespace = current_schema()::regnamespace AND NOT c.relispartition
    UNION ALL
    SELECT c.relname || ' ' || regexp_replace(pg_get_indexdef(x.indexrelid), ' ON (ONLY )?\S+ ', ' ON ')
    FROM pg_index x JOIN pg_class c ON c.oid = x.indrelid
    WHERE c.relnamespace = current_schema()::regnamespace AND NOT c.relispartition
    ORDER BY 1`;
  return rows.map((r) => r.line);
}

describe.each(DATABASES)("a previous release's warehouse on %s", (kind) => {
  let sandbox: Sandbox;
  let current: Awaited<ReturnType<typeof openTestDatabase>>;
  let previous: { db: Database; drop: () => Promise<void> };
  const sync = (database: Database) =>
    runEngine(
      { baseUrl: sandbox.url, projects: sandbox.projects, accountToken: sandbox.accountToken, database, now: () => NOW, env: ENV },
      { command: "sync", mode: { kind: "sync" } },
    );

  beforeAll(async () => {
    sandbox = await startSandbox({ now: () => NOW, seed: 3, projects: 1, burstKeys: 300, maxRecords: 1000 });
    [current, previous] = await Promise.all([openTestDatabase(kind), previousRelease(kind)]);
  }, 120_000);
  afterAll(async () => {
    await sandbox?.stop();
    await current?.drop();
    await previous?.drop();
  });

  it("migrate upgrades it in place: nothing lost, a second migrate applies nothing, the next sync is incremental", async () => {
    // Filled by a real sync through the engine, then copied into the previous release's tables.
    expect((await sync(current)).exitCode).toBe(0);
    const firstSync = sandbox.requestLog.length;
    expect(reachedBack(sandbox.requestLog)).toBe(12);
    const { db } = previous;
    await copyWarehouse(current.sql, db.sql);
    await db.sql.unsafe("CREATE VIEW my_services AS SELECT pcode, bucket_start, service, count FROM stat_transaction_daily");
    if (kind === "embedded")
      await db.sql.unsafe(
        "CREATE ROLE apm_bi; GRANT USAGE ON SCHEMA apm TO apm_bi; GRANT SELECT ON stat_transaction, my_services TO apm_bi",
      );
    const tables = await existingTables(db.sql);
    expect(tables).not.toContain("rollup_stat_transaction_hourly");
    const had = await columnsOf(db.sql, tables);
    const before = await checksumAll(db.sql, tables);
    const services = await db.sql`SELECT * FROM my_services ORDER BY 1, 2, 3`;
    expect(Number(before.stat_transaction!.split(":")[0])).toBeGreaterThan(0);
    expect(Number(before.events!.split(":")[0])).toBeGreaterThan(0);

    const upgrade = await migrateDatabase(db);
    expect(upgrade.applied).toBe(upgrade.total - 4);
    expect(await migrateDatabase(db)).toEqual({ applied: 0, total: upgrade.total });

    expect(await checksumAll(db.sql, tables, had)).toEqual(before);
    // The columns added since hold nothing yet: a window's status before a prune is kept from now on.
    expect(await db.sql`SELECT count(*)::int AS n FROM sync_windows WHERE gone_from IS NOT NULL`).toEqual([{ n: 0 }]);
    // The rollups were filled from the history the previous release held, coverage from its ledger.
    expect(await rollupDiffs(db.sql)).toEqual([]);
    expect(await coverageDiffs(db.sql)).toEqual([]);
    expect(await db.sql`SELECT * FROM my_services ORDER BY 1, 2, 3`).toEqual(services);
    expect(await shape(db.sql)).toEqual(await shape(current.sql));
    // Every declared table partitioned on its column; its months as partitions, and no default partition.
    const declared = await db.sql<{ name: string; col: string }[]>`
      SELECT c.relname AS name, a.attname::text AS col FROM pg_partitioned_table p JOIN pg_class c ON c.oid = p.partrelid
      JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = p.partattrs[0]
      WHERE c.relnamespace = current_schema()::regnamespace AND p.partstrat = 'r' AND p.partdefid = 0 ORDER BY 1`;
    expect(declared).toEqual(
      partitionedTables()
        .map((t) => ({ name: t.name, col: t.partitionColumn }))
        .sort((x, y) => x.name.localeCompare(y.name)),
    );
    const months = await db.sql<{ name: string }[]>`
      SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
      WHERE i.inhparent = 'stat_transaction'::regclass AND c.relkind = 'r' ORDER BY 1`;
    expect(months.map((m) => m.name)).toEqual(["stat_transaction_p2026_02", "stat_transaction_p2026_03"]);
    if (kind === "embedded") {
      const [grants] =
        await db.sql`SELECT has_table_privilege('apm_bi', 'stat_transaction', 'SELECT') AS t, has_table_privilege('apm_bi', 'my_services', 'SELECT') AS v`;
      expect(grants).toEqual({ t: true, v: true });
    }

    // The next sync finds the migration's partitions and fetches only the recent past: the
    // statistics and ranges from their lookback (an hour, on the hour), not from APM_START.
    sandbox.clearLog();
    expect((await sync(db)).exitCode).toBe(0);
    expect(sandbox.requestLog.length).toBeGreaterThan(0);
    expect(reachedBack(sandbox.requestLog)).toBeLessThanOrEqual(2);
    expect(sandbox.requestLog.length).toBeLessThan(firstSync / 2);
  }, 240_000);

  it("the release of 0009: the rollups read as before, the statistics' whole hours leave their hourly tables, nothing else changes", async () => {
    const last = await previousRelease(kind, "0009_coverage_read_index");
    try {
      const { db } = last;
      // That release partitioned the tables already: the months the rows need first.
      await copyPartitioned(current.sql, db.sql);
      // As that release kept them: every hour in the hourly rollup with its coverage in rollup_coverage
      // (its migration 0008 filled it so), and every day in the daily rollup.
      await fillAsOlderRelease(db.sql);
      const raw = (await existingTables(db.sql)).filter((t) => !t.startsWith("rollup_"));
      const had = await columnsOf(db.sql, raw);
      const before = await checksumAll(db.sql, raw);
      const [hours] = await db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM rollup_coverage WHERE grain = 'hourly'`;
      expect(hours!.n).toBeGreaterThan(0);

      const upgrade = await migrateDatabase(db);
      expect(upgrade.applied).toBe(upgrade.total - 10);
      expect(await checksumAll(db.sql, raw, had)).toEqual(before);
      expect(await rollupDiffs(db.sql)).toEqual([]);
      expect(await coverageDiffs(db.sql)).toEqual([]);
      // The hours of whole-hour raw rows left the table; each hour's coverage is a row again.
      const [left] = await db.sql<{ whole: number; coverage: number }[]>`
        SELECT (SELECT count(*)::int FROM rollup_stat_transaction_hourly r WHERE EXISTS (SELECT 1 FROM stat_transaction s
                  WHERE s.pcode = r.pcode AND s.window_start = r.bucket_start AND s.window_end >= r.bucket_start + interval '1 hour')) AS whole,
               (SELECT count(*)::int FROM rollup_coverage WHERE grain = 'hourly') AS coverage`;
      expect(left!.whole).toBe(0);
      expect(left!.coverage).toBe(hours!.n);
      expect(await shape(db.sql)).toEqual(await shape(current.sql));
    } finally {
      await last.drop();
    }
  }, 240_000);

  it("the release of 0014: its open days become marks, the views read as before, a refresh stores them", async () => {
    const last = await previousRelease(kind, "0014_day_coverage_from_hours");
    try {
      const { db } = last;
      await copyPartitioned(current.sql, db.sql);
      await fillAsOlderRelease(db.sql);
      // That release's whole hours lived in the raw rows only, and a day still being written was
      // open: listed in rollup_open_days, no row in the daily table, computed by the view.
      for (const spec of ROLLUPS.filter((r) => r.hoursFromRaw))
        await db.sql.unsafe(`DELETE FROM "rollup_${spec.source}_hourly" h USING "${spec.source}" s
          WHERE s.pcode = h.pcode AND s.window_start = h.bucket_start AND s.window_end >= h.bucket_start + interval '1 hour'`);
      const open = await db.sql<{ pcode: string; day: Date }[]>`
        WITH d AS (DELETE FROM rollup_stat_transaction_daily WHERE bucket_start = (SELECT max(bucket_start) FROM rollup_stat_transaction_daily)
          RETURNING pcode, bucket_start)
        SELECT DISTINCT pcode::text, bucket_start AS day FROM d`;
      expect(open.length).toBeGreaterThan(0);
      for (const o of open)
        await db.sql`INSERT INTO rollup_open_days (source, pcode, bucket_start) VALUES ('stat_transaction', ${o.pcode}, ${o.day}) ON CONFLICT DO NOTHING`;
      const raw = (await existingTables(db.sql)).filter((t) => !t.startsWith("rollup_"));
      const had = await columnsOf(db.sql, raw);
      const before = await checksumAll(db.sql, raw);

      const upgrade = await migrateDatabase(db);
      expect(upgrade.applied).toBeGreaterThan(0);
      expect(await checksumAll(db.sql, raw, had)).toEqual(before);
      const [left] = await db.sql<{ open: number; marks: number }[]>`
        SELECT (SELECT count(*)::int FROM rollup_open_days) AS open, (SELECT count(*)::int FROM rollup_marks) AS marks`;
      expect(left).toEqual({ open: 0, marks: open.length });
      expect(await rollupDiffs(db.sql)).toEqual([]);
      expect(await coverageDiffs(db.sql)).toEqual([]);
      // The refresher stores the open days: the tables alone are exact, and no mark is left.
      await refresh(db.sql);
      expect(await rollupDiffs(db.sql, { table: true })).toEqual([]);
      expect(await rollupDiffs(db.sql)).toEqual([]);
      expect(await coverageDiffs(db.sql)).toEqual([]);
      expect(await db.sql`SELECT * FROM rollup_marks`).toEqual([]);
      expect(await shape(db.sql)).toEqual(await shape(current.sql));
    } finally {
      await last.drop();
    }
  }, 240_000);
});
