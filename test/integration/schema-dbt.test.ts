// `apm-sync schema --dbt` as installed: the real CLI prints a sources file that a YAML reader
// parses, naming the configured schema and every relation `schema --json` lists, each column with
// the type a migrated database gives it; two formats at once, or a bad setting, is exit 2 with
// nothing on stdout.
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { runCli } from "../support/child-sync.ts";
import { createTestDatabase } from "../support/db.ts";

interface DbtSources {
  version: number;
  sources: { name: string; schema: string; tables: { name: string; columns: { name: string; data_type: string }[] }[] }[];
}

describe("apm-sync schema --dbt", () => {
  it("prints the sources of the configured schema, every relation of `schema --json`", async () => {
    const [dbt, json] = await Promise.all([
      runCli(["schema", "--dbt"], { APM_DB_SCHEMA: "analytics", APM_GRAIN: "30m" }),
      runCli(["schema", "--json"], {}),
    ]);
    expect(dbt.stderr).toBe("");
    expect(dbt.code).toBe(0);
    const file = parse(dbt.stdout) as DbtSources;
    const relations = (JSON.parse(json.stdout) as { relations: { name: string }[] }).relations.map((r) => r.name);
    expect(file.version).toBe(2);
    expect(file.sources.map((s) => [s.name, s.schema])).toEqual([["analytics", "analytics"]]);
    expect(file.sources[0]!.tables.map((t) => t.name)).toEqual(relations);
    const stat = file.sources[0]!.tables.find((t) => t.name === "stat_transaction") as unknown as { config: { freshness: unknown } };
    // APM_GRAIN reached the thresholds: 2 x 30 min + 10 min settle.
    expect(stat.config.freshness).toMatchObject({ warn_after: { count: 70, period: "minute" } });
  }, 60_000);

  it("gives every column of every table and view the type information_schema shows in a migrated database", async () => {
    const db = await createTestDatabase();
    try {
      const dbt = await runCli(["schema", "--dbt"], { APM_DB_SCHEMA: db.schema });
      expect(dbt.code, dbt.stderr).toBe(0);
      // information_schema says ARRAY for an array: its element type (udt_name) spelled as SQL does.
      const rows = await db.sql<{ relation: string; column: string; type: string }[]>`
        SELECT table_name AS relation, column_name AS column,
               CASE data_type WHEN 'ARRAY' THEN format_type(udt_name::regtype, NULL) ELSE data_type END AS type
        FROM information_schema.columns WHERE table_schema = ${db.schema}`;
      const inDatabase = new Map(rows.map((r) => [`${r.relation}.${r.column}`, r.type]));
      const columns = (parse(dbt.stdout) as DbtSources).sources[0]!.tables.flatMap((t) =>
        t.columns.map((c) => [`${t.name}.${c.name}`, c.data_type] as const),
      );
      expect(columns.length).toBeGreaterThan(500);
      const differ = columns
        .filter(([key, type]) => inDatabase.get(key) !== type)
        .map(([key, type]) => `${key}: ${type} vs ${inDatabase.get(key)}`);
      expect(differ).toEqual([]);
    } finally {
      await db.drop();
    }
  }, 60_000);

  it("refuses two formats, and a bad setting, with exit 2 and nothing on stdout", async () => {
    const [both, bad] = await Promise.all([
      runCli(["schema", "--dbt", "--json"], {}),
      runCli(["schema", "--dbt"], { APM_DB_SCHEMA: "Not-An-Identifier" }),
    ]);
    expect([both.code, both.stdout]).toEqual([2, ""]);
    expect(both.stderr).toContain("choose one of");
    expect([bad.code, bad.stdout]).toEqual([2, ""]);
    expect(bad.stderr).toContain("APM_DB_SCHEMA");
  }, 60_000);
});
