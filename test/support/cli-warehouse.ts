// A warehouse of one database kind for tests that run the real CLI against it: the environment
// that points the CLI at it, and `use` to open it in the test only between the CLI's runs (the
// embedded PGlite is one process's at a time).
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type postgres from "postgres";
import { type Database, openDatabase } from "../../src/db/driver/connect.ts";
import type { DatabaseKind } from "./databases.ts";
import { createTestDatabase, type TestDatabase } from "./db.ts";

export async function cliWarehouse(kind: DatabaseKind) {
  const pg: TestDatabase | null = kind === "postgres" ? await createTestDatabase() : null;
  const dir = kind === "embedded" ? await mkdtemp(join(tmpdir(), "apm-prune-")) : null;
  const open = async (): Promise<Database> => pg ?? openDatabase({ databaseUrl: null, dataDir: dir!, dbSchema: "apm" });
  const close = async (db: Database) => (pg ? undefined : db.close());
  const env: Record<string, string> = pg ? { DATABASE_URL: pg.url, APM_DB_SCHEMA: "apm" } : { APM_DATA_DIR: dir!, APM_DB_SCHEMA: "apm" };
  return {
    env,
    async use<T>(fn: (sql: postgres.Sql, db: Database) => Promise<T>): Promise<T> {
      const db = await open();
      try {
        return await fn(db.sql, db);
      } finally {
        await close(db);
      }
    },
    drop: async () => {
      await pg?.drop();
      if (dir) await rm(dir, { recursive: true, force: true });
    },
  };
}

/** The JSON lines (--log-format json) of a command's output with a given msg. */
export const records = (stdout: string, msg: string) =>
  stdout
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l) as Record<string, unknown>)
    .filter((r) => r.msg === msg);
