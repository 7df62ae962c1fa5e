import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { openDatabase } from "../../src/db/driver/connect.ts";
import { dbErrorCode } from "../../src/db/driver/transient.ts";
import { withDbRetry } from "../../src/db/driver/withDbRetry.ts";
import { appliedMigrations, MigrationMismatchError, migrateDatabase, migrationsFolder } from "../../src/warehouse/migrate.ts";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";
import { cutOnStatement, startPgProxy } from "../support/pg-proxy.ts";

const run = promisify(execFile);
const journalLength = (JSON.parse(readFileSync(join(migrationsFolder(), "meta", "_journal.json"), "utf8")) as { entries: unknown[] })
  .entries.length;

const created: TestDatabase[] = [];
async function empty(schema = "apm"): Promise<TestDatabase> {
  const db = await createTestDatabase({ migrated: false, schema });
  created.push(db);
  return db;
}
afterAll(async () => {
  for (const db of created) await db.drop();
});

async function relations(db: TestDatabase, schema: string): Promise<string[]> {
  const rows = await db.sql<{ name: string }[]>`
    select table_name as name from information_schema.tables where table_schema = ${schema} order by 1`;
  return rows.map((r) => r.name);
}

describe("migrateDatabase", () => {
  it("applies every migration once; a second run is a no-op", async () => {
    const db = await empty();
    expect(journalLength).toBeGreaterThanOrEqual(2);
    expect(await migrateDatabase(db)).toEqual({ applied: journalLength, total: journalLength });
    const [{ n }] = (await db.sql`select count(*)::int as n from apm.__drizzle_migrations`) as unknown as [{ n: number }];
    expect(n).toBe(journalLength);
    const before = await relations(db, "apm");
    expect(await migrateDatabase(db)).toEqual({ applied: 0, total: journalLength });
    expect(await relations(db, "apm")).toEqual(before);
    expect(before).toEqual(
      expect.arrayContaining(["stat_transaction", "sync_windows", "stat_transaction_hourly", "stream_freshness", "ledger_gaps"]),
    );
  });

  it("works in a custom schema and leaves public and apm alone", async () => {
    const db = await empty("apm_custom");
    await migrateDatabase(db);
    const custom = await relations(db, "apm_custom");
    expect(custom).toEqual(expect.arrayContaining(["__drizzle_migrations", "projects", "stat_sql_daily", "watermarks"]));
    expect(await relations(db, "apm")).toEqual([]);
    expect(await relations(db, "public")).toEqual([]);
    // Unqualified names resolve to the configured schema through the connection's search_path.
    await db.sql`insert into projects (pcode, project_name) values (3000000000, 'big pcode')`;
    const [row] = await db.sql`select pcode::text as pcode from apm_custom.projects`;
    expect(row?.pcode).toBe("3000000000");
  });

  it("fails loudly when a migration was skipped (drizzle only looks at the last one applied)", async () => {
    const db = await empty();
    await migrateDatabase(db);
    const [first] = await appliedMigrations(db.sql, "apm");
    await db.sql`delete from apm.__drizzle_migrations where created_at = ${first!}`;
    await expect(migrateDatabase(db)).rejects.toThrow(MigrationMismatchError);
    await expect(migrateDatabase(db)).rejects.toThrow(/0000_init/);
  });
});

describe("migrateDatabase while the database goes away", () => {
  it("is retried whole: its lock's connection reconnects, nothing hangs, every migration applied once", async () => {
    const db = await empty();
    const proxy = await startPgProxy(db.url);
    // Every connection cut as the migration's lock is asked for, twice: on the first try the
    // pool's connections are new. The lock was held on a pinned connection of the pool, whose next
    // statement (the unlock) then never settled: the process ended with nothing left to run.
    const cut = cutOnStatement(proxy, "pg_advisory_lock(", 2);
    const through = await openDatabase({ databaseUrl: proxy.url, dataDir: "", dbSchema: "apm" }, undefined, { debug: cut.debug });
    try {
      const attempts: unknown[] = [];
      const result = await withDbRetry(() => migrateDatabase(through), { budgetMs: 20_000, onRetry: (e) => attempts.push(dbErrorCode(e)) });
      expect({ result, cuts: cut.cuts(), retried: attempts.length >= 2 }).toEqual({
        result: { applied: journalLength, total: journalLength },
        cuts: 2,
        retried: true,
      });
      expect(await appliedMigrations(db.sql, "apm")).toHaveLength(journalLength);
    } finally {
      await through.close();
      await proxy.close();
    }
  }, 30_000);
});

describe("apm-sync migrate", () => {
  const cli = (env: Record<string, string>) =>
    run(process.execPath, ["--import", "tsx", "src/cli.ts", "migrate"], { env: { PATH: process.env.PATH ?? "", ...env } }).then(
      (r) => ({ code: 0, ...r }),
      (e: { code: number; stdout: string; stderr: string }) => e,
    );

  it("exits 0 twice (second: already up to date), 2 on a config error and on a database that refuses the connection", async () => {
    const db = await empty("apm_cli");
    const env = { DATABASE_URL: db.url, APM_DB_SCHEMA: "apm_cli" };
    const first = await cli(env);
    expect(first.stdout).toContain(`applied ${journalLength} migration(s)`);
    expect(first.code).toBe(0);
    const second = await cli(env);
    expect(second.code).toBe(0);
    expect(second.stdout).toContain("already up to date");
    const bad = await cli({ ...env, APM_DB_SCHEMA: "Bad-Schema" });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("APM_DB_SCHEMA");
    const down = await cli({ DATABASE_URL: "postgres://someone:secret-pw@127.0.0.1:9/none" });
    expect(down.code).toBe(2);
    expect(down.stderr).toMatch(/DATABASE_URL: connection refused at 127\.0\.0\.1:9; check the host and port/);
    expect(down.stderr).not.toContain("secret-pw");
  });
});
