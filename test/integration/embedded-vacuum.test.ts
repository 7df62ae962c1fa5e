// The embedded database has no autovacuum (PGlite runs Postgres's single-user mode): a run vacuums
// the tables it left dead rows in (db/driver/embedded-vacuum.ts, engine/vacuum-after-run.ts), so
// that a warehouse refetched run after run stays the size of its rows. Without it every backfill of
// the same day added a copy of that day's rows as dead space, for good.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEAD_ROWS, type VacuumOptions, vacuumChurned } from "../../src/db/driver/embedded-vacuum.ts";
import type { EngineDeps } from "../../src/engine/types.ts";
import { vacuumAfterRun } from "../../src/engine/vacuum-after-run.ts";
import { type Sandbox, startSandbox } from "../../src/sandbox/index.ts";
import { type OpenedDatabase, openTestDatabase, serverKind } from "../support/databases.ts";
import { HOUR, runEngine } from "../support/engine-harness.ts";

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
  await db.sql`SELECT pg_stat_force_next_flush()`;
  const rows = await db.sql<{ name: string; n: number }[]>`
    SELECT relname AS name, vacuum_count::int AS n FROM pg_stat_user_tables WHERE schemaname = current_schema() AND relname LIKE ${`${prefix}%`}`;
  return Object.fromEntries(rows.map((r) => [r.name, r.n]));
}

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
    expect(await vacuumChurned(db.sql, { starting: (n, dead) => told.push([n, dead]) })).toEqual({ tables: ["churned"], deadRows: 600 });
    expect(told).toEqual([[1, 600]]);
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
    let churned: { name: string; dead: number }[] = [];
    const sql = {
      unsafe: async (text: string) => {
        calls.push(text);
        if (fail) throw new Error("the vacuum refused by the test");
        return text.includes("pg_stat_user_tables") ? churned : [];
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
    churned = [{ name: "stat_sql_p2026_03", dead: 250_000 }];
    calls.length = 0;
    await vacuumAfterRun(deps());
    expect(said[0]).toBe("vacuuming 1 table(s) holding 250000 dead row(s) ...");
    expect(calls.at(-1)).toBe('VACUUM "stat_sql_p2026_03"');
    fail = true;
    await expect(vacuumAfterRun(deps())).resolves.toBeUndefined();
    expect(warned).toEqual([expect.stringContaining("vacuum after the run failed: the vacuum refused by the test")]);
  });
});
