// A fresh database per test file, cloned from the migrated template of global-setup.ts.
// Kept (and named on stderr) when a test of the file failed, so it can be inspected.
import { randomBytes } from "node:crypto";
import postgres from "postgres";
import { beforeEach, inject } from "vitest";
import { type Database, type OpenOptions, openDatabase } from "../../src/db/driver/connect.ts";
import { TEMPLATE_SCHEMA, withDatabase } from "./global-setup.ts";

export interface TestDatabase extends Database {
  /** Connection URL of this database (search_path is not part of it). */
  readonly url: string;
  readonly name: string;
  /** Closes the pool and drops the database, unless a test of this file failed. */
  drop(): Promise<void>;
}

export interface TestDatabaseOptions extends OpenOptions {
  /** false: an empty database (nothing migrated), e.g. to test migrate itself. Default true. */
  readonly migrated?: boolean;
  /** Schema of the connection; the template is migrated in `apm`. */
  readonly schema?: string;
}

let failed = false;
beforeEach(({ onTestFailed }) => {
  onTestFailed(() => {
    failed = true;
  });
});

/** Administrative connection to the test server (CREATE/DROP DATABASE). */
export function adminSql(): postgres.Sql {
  return postgres(inject("adminUrl"), { max: 1, onnotice: () => {} });
}

export async function createTestDatabase(options: TestDatabaseOptions = {}): Promise<TestDatabase> {
  const adminUrl = inject("adminUrl");
  const name = `apm_t_${randomBytes(6).toString("hex")}`;
  const admin = adminSql();
  try {
    const template = options.migrated === false ? "" : ` TEMPLATE "${inject("templateDatabase")}"`;
    await admin.unsafe(`CREATE DATABASE "${name}"${template}`);
  } finally {
    await admin.end();
  }
  const url = withDatabase(adminUrl, name);
  const database = await openDatabase({ databaseUrl: url, dataDir: "", dbSchema: options.schema ?? TEMPLATE_SCHEMA }, undefined, options);
  return {
    ...database,
    url,
    name,
    drop: async () => {
      await database.close();
      if (failed) {
        process.stderr.write(`test database kept for inspection: ${name}\n`);
        return;
      }
      const a = adminSql();
      try {
        await a.unsafe(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      } finally {
        await a.end();
      }
    },
  };
}

/**
 * `ALTER DATABASE <name> SET <setting>` for each setting: a test's own database set up as a server
 * for other clients may be (new sessions take it), the shared server itself never reconfigured.
 */
export async function setOnDatabase(name: string, ...settings: string[]): Promise<void> {
  const admin = adminSql();
  try {
    for (const setting of settings) await admin.unsafe(`ALTER DATABASE "${name}" SET ${setting}`);
  } finally {
    await admin.end();
  }
}
