// APM_DB_SCHEMA is the schema, whatever search_path DATABASE_URL carries (issue 21: with
// `?search_path=public` the tables were created in `public`, the migrations recorded in the
// schema, and the next run with the plain URL failed `relation "sync_runs" does not exist`).
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openDatabase } from "../../src/db/driver/connect.ts";
import { lockSessionFor } from "../../src/db/driver/lockSession.ts";
import { withAdvisoryLock } from "../../src/db/driver/withAdvisoryLock.ts";
import { tableNames } from "../../src/db/tables.ts";
import { replaceWindowRows } from "../../src/db/write/rowSink.ts";
import { migrateDatabase } from "../../src/warehouse/migrate.ts";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";
import { takeOnce } from "../support/lock.ts";
import { partitionsFor } from "../support/partitions.ts";

const T0 = Date.UTC(2026, 0, 5, 10);
const H = 3_600_000;

const URL_FORMS = [
  { form: "?search_path=public", schema: "apm_url_param" },
  { form: "?options=-csearch_path%3Dpublic", schema: "apm_url_options" },
  { form: "?Search_Path=public&application_name=x", schema: "apm_url_case" },
];

describe("a search_path in DATABASE_URL", () => {
  // A new, empty database per case: each shows on its own where the tables went.
  let t: TestDatabase;
  beforeEach(async () => {
    t = await createTestDatabase({ migrated: false });
  });
  afterEach(async () => {
    await t?.drop();
  });

  const tablesIn = async (schema: string) =>
    (
      await t.sql<{ name: string }[]>`
        select table_name as name from information_schema.tables where table_schema = ${schema} and table_type = 'BASE TABLE'`
    ).map((r) => r.name);

  it.each(URL_FORMS)("$form: every table in APM_DB_SCHEMA, and the plain URL works after it", async ({ form, schema }) => {
    const odd = await openDatabase({ databaseUrl: `${t.url}${form}`, dataDir: "", dbSchema: schema });
    try {
      const migrated = await migrateDatabase(odd);
      expect(migrated.applied).toBe(migrated.total);
      const [{ path }] = (await lockSessionFor(odd.sql).sql`select current_setting('search_path') as path`) as unknown as [
        { path: string },
      ];
      expect(path).toBe(schema);
      // A write under a stream lock, as the engine makes it.
      await partitionsFor(odd.sql, "stat_transaction", [], T0);
      await withAdvisoryLock(
        odd,
        "stat.transaction",
        1,
        async (lock) =>
          odd.sql.begin(async (tx) => {
            expect(await lock.confirm(tx)).toBe(true);
            await replaceWindowRows(tx, "stat_transaction", ["service_hash", "count"], 1, T0, T0 + H, [{ service_hash: 1, count: 5 }]);
          }),
        takeOnce,
      );
    } finally {
      await odd.close();
    }
    expect(await tablesIn("public")).toEqual([]);
    expect((await tablesIn(schema)).sort()).toEqual(expect.arrayContaining([...tableNames(), "__drizzle_migrations"].sort()));
    const plain = await openDatabase({ databaseUrl: t.url, dataDir: "", dbSchema: schema });
    try {
      expect((await migrateDatabase(plain)).applied).toBe(0);
      const rows = await plain.sql`select service_hash::int as h, count::int as c from stat_transaction`;
      expect(rows).toEqual([{ h: 1, c: 5 }]);
    } finally {
      await plain.close();
    }
  });
});
