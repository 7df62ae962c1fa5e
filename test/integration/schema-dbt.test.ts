// `apm-sync schema --dbt` as installed: the real CLI prints a sources file that a YAML reader
// parses, naming the configured schema and every relation `schema --json` lists; two formats at
// once, or a bad setting, is exit 2 with nothing on stdout.
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { runCli } from "../support/child-sync.ts";

describe("apm-sync schema --dbt", () => {
  it("prints the sources of the configured schema, every relation of `schema --json`", async () => {
    const [dbt, json] = await Promise.all([
      runCli(["schema", "--dbt"], { APM_DB_SCHEMA: "analytics", APM_GRAIN: "30m" }),
      runCli(["schema", "--json"], {}),
    ]);
    expect(dbt.stderr).toBe("");
    expect(dbt.code).toBe(0);
    const file = parse(dbt.stdout) as { version: number; sources: { name: string; schema: string; tables: Record<string, unknown>[] }[] };
    const relations = (JSON.parse(json.stdout) as { relations: { name: string }[] }).relations.map((r) => r.name);
    expect(file.version).toBe(2);
    expect(file.sources.map((s) => [s.name, s.schema])).toEqual([["analytics", "analytics"]]);
    expect(file.sources[0]!.tables.map((t) => t.name)).toEqual(relations);
    const stat = file.sources[0]!.tables.find((t) => t.name === "stat_transaction") as { config: { freshness: unknown } };
    // APM_GRAIN reached the thresholds: 2 x 30 min + 10 min settle.
    expect(stat.config.freshness).toMatchObject({ warn_after: { count: 70, period: "minute" } });
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
