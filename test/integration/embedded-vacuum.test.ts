// The embedded database has no autovacuum (PGlite runs Postgres's single-user mode): a run vacuums
// the tables it left dead rows in (db/driver/embedded-vacuum.ts, engine/vacuum-after-run.ts), so
// that a warehouse refetched run after run stays the size of its rows. Without it every backfill of
// the same day added a copy of that day's rows as dead space, for good.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEAD_ROWS, type VacuumOptions, vacuumChurned } from "../../src/db/driver/embedded-vacuum.ts";
import { resetStreams } from "../../src/engine/reset.ts";
import type { EngineDeps } from "../../src/engine/types.ts";
import { vacuumAfterRun } from "../../src/engine/vacuum-after-run.ts";
import { type Sandbox, startSandbox } from "../../src/sandbox/index.ts";
import { type OpenedDatabase, openTestDatabase, serverKind } from "../support/databases.ts";
import { HOUR, runEngine, withEngine } from "../support/engine-harness.ts";

const NOW = Date.UTC(2026, 2, 10, 0, 0);
let db: OpenedDatabase;
let sandbox: Sandbox;

beforeAll(async () => {
  db = await openTestDatabase("embedded");
  sandbox = await startSandbox({ now: () => NOW, seed: 3, projects: 1, burstKeys: 0 });
});
afterAll(async () => {
  await sandbox?.stop();
  await db?.drop();
});

/** Bytes of a partitioned table's partitions, their indexes included. */
async function bytesOf(table: string): Promise<number> {
  const [row] = await db.sql<{ bytes: number }[]>`
    SELECT coalesce(sum(pg_total_relation_size(i.inhrelid)), 0)::float8 AS bytes FROM pg_inherits i WHERE i.inhparent = to_regclass(${table})`;
  return row!.bytes;
}

/** How many times this process vacuumed each table whose name starts with `prefix`. */
async function vacuums(prefix: string): Promise<Record<string, number>> {
  return Object.fromEntries((await tableStats(prefix)).map((r) => [r.name, r.n]));
}

/** This process's counters of the tables whose names start with `prefix`: vacuums, dead rows. */
async function tableStats(prefix: string): Promise<{ name: string; n: number; dead: number }[]> {
  await db.sql`SELECT pg_stat_force_next_flush()`;
  return db.sql<{ name: string; n: number; dead: number }[]>`
    SELECT relname AS name, vacuum_count::int AS n, n_dead_tup::int AS dead FROM pg_stat_user_tables
    WHERE schemaname = current_schema() AND relname LIKE ${`${prefix}%`}`;
}

const sum = (values: readonly number[]) => values.reduce((a, b) => a + b, 0);

describe("the embedded database's vacuum", () => {
  it("runs on the embedded database (the test would prove nothing on a server)", async () => {
    expect(await serverKind(db)).toBe("embedded");
  });

  it("vacuums the tables holding more than its threshold of dead rows, and only those", async () => {
    await db.sql.unsafe(`CREATE TABLE churned (x int); CREATE TABLE barely (x int); CREATE TABLE untouched (x int)`);
    await db.sql.unsafe(`INSERT INTO churned SELECT generate_series(1, 1000); INSERT INTO barely SELECT generate_series(1, 1000)`);
    await db.sql.unsafe(`INSERT INTO untouched SELECT generate_series(1, 1000)`);
    await db.sql.unsafe(`DELETE FROM churned WHERE x <= 600; DELETE FROM barely WHERE x <= ${DEAD_ROWS}`);
    const stopped = new AbortController();
    stopped.abort();
    expect(await vacuumChurned(db.sql, { stopping: stopped.signal })).toEqual({ tables: [], deadRows: 0 });
    const told: [number, number][] = [];
    const r = await vacuumChurned(db.sql, { starting: (n, dead) => told.push([n, dead]) });
    // Of the schema's tables only the churned one; the catalogs the test's tables changed are named with their schema.
    expect(r.tables.filter((t) => !t.startsWith("pg_catalog."))).toEqual(["churned"]);
    expect(r.tables.every((t) => t === "churned" || t.startsWith("pg_catalog.pg_"))).toBe(true);
    expect(r.deadRows).toBeGreaterThanOrEqual(600);
    expect(told).toEqual([[r.tables.length, r.deadRows]]);
    expect(await vacuums("")).toMatchObject({ churned: 1, barely: 0, untouched: 0 });
    // Its dead rows are gone: nothing is left to vacuum.
    expect(await vacuumChurned(db.sql)).toEqual({ tables: [], deadRows: 0 });
  });

  it("keeps a warehouse refetched run after run the size of its rows", async () => {
    const backfill = {
      command: "backfill",
      mode: { kind: "backfill", from: NOW - 24 * HOUR, to: NOW },
      streams: ["stat.sql"],
    } as const;
    const run = () => runEngine({ baseUrl: sandbox.url, projects: sandbox.projects, database: db, now: () => NOW }, backfill);
    const sizes: number[] = [];
    for (let i = 0; i < 4; i++) {
      // Each backfill replaces every window of the day, and the refresh rewrites the day's buckets.
      expect((await run()).exitCode).toBe(0);
      sizes.push((await bytesOf("stat_sql")) + (await bytesOf("rollup_stat_sql_daily")));
    }
    const [rows] = await db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM stat_sql`;
    expect(rows!.n).toBeGreaterThan(1000);
    // The dead rows of the second run's replace are reused by the third's and fourth's rows
    // (without the vacuum each run added the day's rows again: the fourth at about twice the second).
    expect(sizes[3]!).toBeLessThanOrEqual(sizes[1]! * 1.1);
    const counts = await vacuums("stat_sql_p");
    expect(Object.values(counts).reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(3);
  });

  it("vacuums the system catalogs, which the temporary tables of upserts churn", async () => {
    // Every snapshot's upsert stages its rows in a temporary table, whose catalog rows die with it.
    const sync = { command: "sync", mode: { kind: "sync" }, streams: ["scalar", "project.spot"] } as const;
    const attributes = async () => {
      await db.sql`SELECT pg_stat_force_next_flush()`;
      const [row] = await db.sql<{ vacuums: number; dead: number; bytes: number }[]>`
        SELECT vacuum_count::int AS vacuums, n_dead_tup::int AS dead, pg_total_relation_size(relid)::float8 AS bytes
        FROM pg_stat_sys_tables WHERE relid = 'pg_catalog.pg_attribute'::regclass`;
      return row!;
    };
    const before = await attributes();
    const sizes: number[] = [];
    for (let i = 0; i < 4; i++) {
      const r = await runEngine({ baseUrl: sandbox.url, projects: sandbox.projects, database: db, now: () => NOW + i * HOUR }, sync);
      expect(r.exitCode).toBe(0);
      const after = await attributes();
      // Without the catalogs' vacuum the first sync left 1,346 dead rows in pg_attribute (this test alone).
      expect(after.dead).toBeLessThanOrEqual(DEAD_ROWS);
      sizes.push(after.bytes);
    }
    expect((await attributes()).vacuums).toBeGreaterThanOrEqual(before.vacuums + 4);
    expect(sizes[3]!).toBeLessThanOrEqual(sizes[1]!);
  });

  it("vacuums what a reset deleted, so that the refetch after it reuses the space", async () => {
    const engine = { baseUrl: sandbox.url, projects: sandbox.projects, database: db, now: () => NOW };
    const before = await tableStats("stat_sql_p");
    const req = { streams: ["stat.sql"], projects: null, from: null, to: null, dropRows: true, dryRun: false } as const;
    const slices = await withEngine(engine, (deps) => resetStreams(deps, req));
    expect(sum(slices.map((s) => s.rowsDropped ?? 0))).toBeGreaterThan(1000);
    const after = await tableStats("stat_sql_p");
    // Every partition the reset emptied was vacuumed (its vacuum count up by one), and no dead row is left.
    expect(sum(after.map((t) => t.n))).toBeGreaterThan(sum(before.map((t) => t.n)));
    expect(sum(after.map((t) => t.dead))).toBe(0);
    const [rows] = await db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM stat_sql`;
    expect(rows!.n).toBe(0);
    // A reset without --from and --to marks the hours its rows were in, not every hour from 1970
    // to 9999 (70 million: the reset ran for hours): the day backfilled, 24 hours at most.
    const [marks] = await db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM rollup_marks`;
    expect(marks!.n).toBeGreaterThan(0);
    expect(marks!.n).toBeLessThanOrEqual(24);
  });

  it("is left to autovacuum on a server", async () => {
    const server = await openTestDatabase("postgres");
    try {
      expect(await serverKind(server)).toBe("postgres");
      await server.sql.unsafe(`CREATE TABLE churned (x int); INSERT INTO churned SELECT generate_series(1, 1000)`);
      await server.sql.unsafe(`DELETE FROM churned`);
      expect(await server.vacuum()).toEqual({ tables: [], deadRows: 0 });
    } finally {
      await server.drop();
    }
  });

  it("is skipped on a stop, says a long one before it starts, and fails no run", async () => {
    const calls: string[] = [];
    let fail = false;
    let churned: { schema: string; name: string; own: boolean; dead: number }[] = [];
    const sql = {
      unsafe: async (text: string) => {
        calls.push(text);
        if (fail) throw new Error("the vacuum refused by the test");
        return text.includes("pg_stat_all_tables") ? churned : [];
      },
    } as unknown as OpenedDatabase["sql"];
    const warned: string[] = [];
    const said: string[] = [];
    const logger = { warn: (_: unknown, m: string) => warned.push(m), info: (_: unknown, m: string) => said.push(m), debug: () => {} };
    const database = { ...db, vacuum: (opts?: VacuumOptions) => vacuumChurned(sql, opts) };
    const deps = (stopping?: AbortSignal) => ({ database, logger, ...(stopping ? { stopping } : {}) }) as unknown as EngineDeps;
    const stopped = new AbortController();
    stopped.abort();
    await vacuumAfterRun(deps(stopped.signal));
    expect(calls).toEqual([]);
    // Not stopped: it reads the counters (the fake answers no table).
    await vacuumAfterRun(deps());
    expect(calls[0]).toContain("pg_stat_force_next_flush");
    expect(warned).toEqual([]);
    expect(said).toEqual([]);
    // A refetched month's dead rows: said before the vacuum starts (it can take a while).
    churned = [
      { schema: "apm", name: "stat_sql_p2026_03", own: true, dead: 250_000 },
      { schema: "pg_catalog", name: "pg_attribute", own: false, dead: 2_500 },
    ];
    calls.length = 0;
    await vacuumAfterRun(deps());
    expect(said[0]).toBe("vacuuming 2 table(s) holding 252500 dead row(s) ...");
    expect(calls.slice(-2)).toEqual(['VACUUM "stat_sql_p2026_03"', 'VACUUM "pg_catalog"."pg_attribute"']);
    fail = true;
    await expect(vacuumAfterRun(deps())).resolves.toBeUndefined();
    expect(warned).toEqual([expect.stringContaining("vacuum failed: the vacuum refused by the test")]);
  });
});
