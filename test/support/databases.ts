// Both databases a write can go to, opened the way production opens them (openDatabase): a
// Postgres server (a database cloned from the migrated template) and the embedded PGlite (a new
// data directory, migrated). Write tests run once per database with `describe.each(DATABASES)`.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Database, type OpenOptions, openDatabase } from "../../src/db/driver/connect.ts";
import { migrateDatabase } from "../../src/warehouse/migrate.ts";
import { createTestDatabase } from "./db.ts";
import { TEMPLATE_SCHEMA } from "./global-setup.ts";

export const DATABASES = ["postgres", "embedded"] as const;
export type DatabaseKind = (typeof DATABASES)[number];

export interface OpenedDatabase extends Database {
  /** Closes it and removes what the test made (a Postgres database is kept when a test failed). */
  drop(): Promise<void>;
}

export async function openTestDatabase(kind: DatabaseKind, options: OpenOptions = {}): Promise<OpenedDatabase> {
  if (kind === "postgres") return createTestDatabase(options);
  const dir = await mkdtemp(join(tmpdir(), "apm-embedded-test-"));
  const database = await openDatabase({ databaseUrl: null, dataDir: dir, dbSchema: TEMPLATE_SCHEMA }, undefined, options);
  await migrateDatabase(database);
  return {
    ...database,
    drop: async () => {
      await database.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/**
 * Which server answers on `database`: a test that means to run on the embedded database must not
 * pass on a Postgres server by mistake, and the other way round. PGlite is Postgres built for
 * WebAssembly (emscripten); its version string says so.
 */
export async function serverKind(database: Pick<Database, "sql">): Promise<DatabaseKind> {
  const [row] = await database.sql<{ v: string }[]>`select version() as v`;
  return /emscripten|wasm/i.test(row?.v ?? "") ? "embedded" : "postgres";
}
