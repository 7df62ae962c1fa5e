// `schema --dbt`: the sources file parses as YAML (the `yaml` package, a reader independent of the
// emitter), lists every relation and column `schema --json` lists, each described, and puts
// freshness on each table a windowed stream fills, with thresholds that follow the configured grain.
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { OPERATIONS } from "../../src/catalogue/index.ts";
import { isWindowed } from "../../src/catalogue/types.ts";
import { loadConfig } from "../../src/config.ts";
import { dictionaryJson } from "../../src/dictionary/render.ts";
import { yamlDocument } from "../../src/util/yaml-text.ts";
import { dbtPeriod, dbtSources } from "../../src/warehouse/dbt-sources.ts";

interface DbtColumn {
  name: string;
  description: string;
  data_type: string;
}
interface DbtTable {
  name: string;
  description: string;
  config?: { loaded_at_field: string; freshness: Record<string, { count: number; period: string }> };
  columns: DbtColumn[];
}
interface DbtFile {
  version: number;
  sources: { name: string; schema: string; tables: DbtTable[] }[];
}

const sourcesOf = (env: Record<string, string> = {}) => parse(dbtSources(loadConfig({ env }))) as DbtFile;
const json = JSON.parse(dictionaryJson()) as { relations: { name: string; kind: string; columns: { name: string; type: string }[] }[] };
const WINDOWED_TABLES = [...new Set(OPERATIONS.filter((op) => op.stream && isWindowed(op.stream)).map((op) => op.stream!.table))];
const minutes = (p: { count: number; period: string }) => p.count * { minute: 1, hour: 60, day: 1440 }[p.period]!;

describe("schema --dbt", () => {
  const file = sourcesOf();
  const tables = file.sources[0]!.tables;
  const byName = new Map(tables.map((t) => [t.name, t]));

  it("is one version-2 source named after the schema", () => {
    expect(file.version).toBe(2);
    expect(file.sources.map((s) => [s.name, s.schema])).toEqual([["apm", "apm"]]);
    expect(sourcesOf({ APM_DB_SCHEMA: "analytics" }).sources.map((s) => [s.name, s.schema])).toEqual([["analytics", "analytics"]]);
  });

  it("names every relation and column of `schema --json`, in its order, each described", () => {
    expect(tables.map((t) => t.name)).toEqual(json.relations.map((r) => r.name));
    expect(json.relations.length).toBeGreaterThan(50);
    for (const r of json.relations) {
      const t = byName.get(r.name)!;
      expect(t.columns.map((c) => [c.name, c.data_type])).toEqual(r.columns.map((c) => [c.name, c.type]));
      expect(t.description.trim()).not.toBe("");
    }
    const undescribed = tables.flatMap((t) => t.columns.filter((c) => c.description.trim() === "").map((c) => `${t.name}.${c.name}`));
    expect(undescribed).toEqual([]);
  });

  it("puts freshness on each table a windowed stream fills, on a column of that table, and on no other", () => {
    expect(WINDOWED_TABLES.length).toBeGreaterThan(15);
    expect(
      tables
        .filter((t) => t.config)
        .map((t) => t.name)
        .sort(),
    ).toEqual([...WINDOWED_TABLES].sort());
    for (const name of WINDOWED_TABLES) {
      const t = byName.get(name)!;
      expect(
        t.columns.map((c) => c.name),
        name,
      ).toContain(t.config!.loaded_at_field);
      const { warn_after, error_after } = t.config!.freshness;
      expect(minutes(error_after!), name).toBeGreaterThan(minutes(warn_after!));
    }
    expect(byName.get("stat_transaction")!.config!.loaded_at_field).toBe("window_start");
    expect(byName.get("metric_points")!.config!.loaded_at_field).toBe("ts");
    expect(byName.get("visitors_monthly")!.config!.loaded_at_field).toBe("synced_at");
  });

  it("derives the thresholds from the grain the engine plans with, plus the settle time", () => {
    // Default: 1 h grain, 10 min settle -> 2 h 10 min and 6 h 10 min.
    expect(byName.get("stat_sql")!.config!.freshness).toEqual({
      warn_after: { count: 130, period: "minute" },
      error_after: { count: 370, period: "minute" },
    });
    // The series streams declare a day in the catalogue: 2 days + 10 min, rounded up to hours.
    expect(byName.get("metric_points")!.config!.freshness.warn_after).toEqual({ count: 49, period: "hour" });
    const tuned = new Map(sourcesOf({ APM_GRAIN: "2h", APM_SETTLE: "30m" }).sources[0]!.tables.map((t) => [t.name, t]));
    expect(tuned.get("stat_sql")!.config!.freshness.warn_after).toEqual({ count: 270, period: "minute" });
    expect(tuned.get("stat_sql")!.config!.freshness.error_after).toEqual({ count: 13, period: "hour" }); // 12 h 30 min, rounded up by at most 5%
    // heap_use's operations take at most an hour per request: its grain stays 1 h.
    expect(tuned.get("heap_use")!.config!.freshness.warn_after).toEqual({ count: 150, period: "minute" });
  });

  it("writes periods dbt reads, never shorter than asked", () => {
    expect(dbtPeriod(130 * 60_000)).toEqual({ count: 130, period: "minute" });
    expect(dbtPeriod(2 * 86_400_000)).toEqual({ count: 2, period: "day" });
    expect(dbtPeriod(3 * 3_600_000 + 1)).toEqual({ count: 181, period: "minute" });
    expect(dbtPeriod(1)).toEqual({ count: 1, period: "minute" });
  });
});

describe("yaml emitter", () => {
  it("round-trips strings a plain scalar would misread, nested collections and empty ones", () => {
    const value = {
      words: ["yes", "no", "null", "on", "~", "1e3", "0x1F", "2026-01-01", "- a", "a: b", "#x", "'q'", '"dq"', "back\\slash"],
      controls: "tab\tnew\nline\u0000nul\u007fdel\u0085nel\u0090c1\ufeffbom\ufffenon\u202ebidi",
      surrogates: "lone \ud800 high, lone \udc00 low, a pair \ud83d\ude00",
      "key with space": { "": "empty key", y: true, n: 1.5, z: null },
      nested: [[], {}, [1, [2, { a: "b" }]], { list: ["x"] }],
    };
    const text = yamlDocument(value, ["a comment"]);
    expect(parse(text)).toEqual(value);
    // What PyYAML (dbt's reader) refuses raw in a stream: its reader's NON_PRINTABLE set.
    const nonPrintable = [...text].filter((c) => !/^[\t\n\r\x20-\x7e\x85\xa0-\ud7ff\ue000-\ufffd]$|^[\u{10000}-\u{10ffff}]$/u.test(c));
    expect(nonPrintable).toEqual([]);
  });
});
