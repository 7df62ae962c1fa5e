// The data dictionary in a migrated warehouse (issue 18 item 4): every table, view and column of the
// schema carries the dictionary's comment, on Postgres and on the embedded database; every entry
// names something that exists, with its type; a second migrate writes nothing; a warehouse of the
// previous release (no comments) gets them on its next migrate. `schema` needs no database.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { applyComments } from "../../src/db/applyComments.ts";
import { type Database, openDatabase } from "../../src/db/driver/connect.ts";
import { columnComment, dictionaryComments, relationComment } from "../../src/dictionary/comments.ts";
import { DICTIONARY } from "../../src/dictionary/index.ts";
import { migrateDatabase } from "../../src/warehouse/migrate.ts";
import { runCli } from "../support/child-sync.ts";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";

interface CatalogRow {
  rel: string;
  kind: string;
  col: string | null;
  type: string | null;
  comment: string | null;
  stamp: string;
}

/** Relations and columns of `schema` (monthly partitions left out: not for users) with their comment and the pg_description row version (xmin). */
async function catalog(sql: Database["sql"], schema: string): Promise<CatalogRow[]> {
  return sql<CatalogRow[]>`
    SELECT c.relname AS rel, c.relkind::text AS kind, a.attname::text AS col, format_type(a.atttypid, a.atttypmod) AS type,
      d.description AS comment, coalesce(d.xmin::text, '') AS stamp, a.attnum AS num
    FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
    JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
    LEFT JOIN pg_description d ON d.objoid = c.oid AND d.classoid = 'pg_class'::regclass AND d.objsubid = a.attnum
    WHERE n.nspname = ${schema} AND c.relkind IN ('r', 'p', 'v', 'm') AND NOT c.relispartition
    UNION ALL
    SELECT c.relname, c.relkind::text, NULL, NULL, d.description, coalesce(d.xmin::text, ''), 0
    FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
    LEFT JOIN pg_description d ON d.objoid = c.oid AND d.classoid = 'pg_class'::regclass AND d.objsubid = 0
    WHERE n.nspname = ${schema} AND c.relkind IN ('r', 'p', 'v', 'm') AND NOT c.relispartition
    ORDER BY 1, 7`;
}

/** Every relation and column described, with the dictionary's text and type; no entry missing from the database. */
async function expectDescribed(sql: Database["sql"], schema: string): Promise<void> {
  const rows = await catalog(sql, schema);
  const undescribed = rows.filter((r) => !r.comment?.trim()).map((r) => (r.col ? `${r.rel}.${r.col}` : r.rel));
  expect(undescribed).toEqual([]);
  const actual = new Map(rows.map((r) => [`${r.rel}.${r.col ?? ""}`, r]));
  const wrong: string[] = [];
  for (const relation of DICTIONARY) {
    const rel = actual.get(`${relation.name}.`);
    if (!rel) wrong.push(`${relation.name}: not in the database`);
    else {
      if ((rel.kind === "v") !== (relation.kind === "view")) wrong.push(`${relation.name}: kind ${rel.kind}`);
      if (rel.comment !== relationComment(relation)) wrong.push(`${relation.name}: comment differs`);
    }
    const order = rows.filter((r) => r.rel === relation.name && r.col).map((r) => r.col);
    if (relation.kind === "view")
      expect(
        relation.columns.map((c) => c.name),
        relation.name,
      ).toEqual(order);
    for (const column of relation.columns) {
      const col = actual.get(`${relation.name}.${column.name}`);
      if (!col) wrong.push(`${relation.name}.${column.name}: not in the database`);
      else if (col.type !== column.type) wrong.push(`${relation.name}.${column.name}: ${column.type}, database ${col.type}`);
      else if (col.comment !== columnComment(column)) wrong.push(`${relation.name}.${column.name}: comment differs`);
    }
  }
  expect(wrong).toEqual([]);
}

/** Removes every comment of the schema: a warehouse made before the dictionary. */
async function stripComments(sql: Database["sql"], schema: string): Promise<void> {
  const rows = await catalog(sql, schema);
  const keyword = (kind: string) => (kind === "v" ? "VIEW" : "TABLE");
  const statements = rows.map((r) =>
    r.col ? `COMMENT ON COLUMN "${schema}"."${r.rel}"."${r.col}" IS NULL` : `COMMENT ON ${keyword(r.kind)} "${schema}"."${r.rel}" IS NULL`,
  );
  await sql.begin((tx) => tx.unsafe(statements.join(";\n")));
}

const stamps = async (sql: Database["sql"], schema: string) => (await catalog(sql, schema)).map((r) => `${r.rel}.${r.col}:${r.stamp}`);

/** The checks every database must pass, from an empty one. */
async function checkDatabase(db: Database): Promise<void> {
  const first = await migrateDatabase(db);
  expect(first.applied).toBe(first.total);
  await expectDescribed(db.sql, db.schema);
  // A second migrate rewrites no pg_description row (same row versions).
  const before = await stamps(db.sql, db.schema);
  expect((await migrateDatabase(db)).applied).toBe(0);
  expect(await stamps(db.sql, db.schema)).toEqual(before);
  // The previous release left no comments; its next migrate (no migration to apply) writes them all.
  await stripComments(db.sql, db.schema);
  expect((await catalog(db.sql, db.schema)).filter((r) => r.comment !== null)).toEqual([]);
  expect((await migrateDatabase(db)).applied).toBe(0);
  await expectDescribed(db.sql, db.schema);
}

const dir = mkdtempSync(join(tmpdir(), "apm-sync-dictionary-"));
const created: TestDatabase[] = [];
afterAll(async () => {
  for (const db of created) await db.drop();
  rmSync(dir, { recursive: true, force: true });
});

describe("data dictionary in the database", () => {
  it("Postgres, in a configured schema: every relation and column commented, once", async () => {
    const db = await createTestDatabase({ migrated: false, schema: "apm_dict" });
    created.push(db);
    await checkDatabase(db);
    // Only the warehouse schema is touched.
    const [other] = await db.sql<{ n: number }[]>`
      SELECT count(*)::int AS n FROM pg_description d JOIN pg_class c ON c.oid = d.objoid JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname NOT IN ('apm_dict', 'pg_catalog', 'information_schema')`;
    expect(other!.n).toBe(0);
  });

  it("the embedded database: the same; a role that does not own the tables is told to run migrate as the owner", async () => {
    const db = await openDatabase({ databaseUrl: null, dataDir: dir, dbSchema: "apm_emb" });
    try {
      await checkDatabase(db);
      // A role of the embedded instance only (the shared server's roles are left alone).
      await db.sql.unsafe(`COMMENT ON TABLE apm_emb.projects IS NULL; CREATE ROLE apm_etl; GRANT USAGE ON SCHEMA apm_emb TO apm_etl`);
      await db.sql.unsafe("SET ROLE apm_etl");
      await expect(applyComments(db.sql, db.schema, dictionaryComments())).rejects.toThrow(
        /comments need the owner of the tables of schema apm_emb: run migrate as that role \(must be owner of table projects\)/,
      );
      await db.sql.unsafe("RESET ROLE");
      expect(await applyComments(db.sql, db.schema, dictionaryComments())).toBe(1);
    } finally {
      await db.close();
    }
  });
});

describe("apm-sync schema", () => {
  it("prints the dictionary with no database and no API configuration, and writes nothing", async () => {
    const cwd = mkdtempSync(join(dir, "cwd-"));
    const markdown = await runCli(["schema", "--markdown"], {}, { cwd });
    expect(markdown.code, markdown.stderr).toBe(0);
    expect(markdown.stdout).toBe(readFileSync(new URL("../../docs/warehouse.md", import.meta.url), "utf8"));
    const json = await runCli(["schema", "--json"], {}, { cwd });
    expect(json.code, json.stderr).toBe(0);
    expect((JSON.parse(json.stdout) as { relations: unknown[] }).relations).toHaveLength(DICTIONARY.length);
    expect(readdirSync(cwd)).toEqual([]);
  });
});
