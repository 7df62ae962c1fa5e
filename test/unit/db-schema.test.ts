import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { OPERATIONS } from "../../src/catalogue/index.ts";
import { VERSIONED_TABLES } from "../../src/db/history/versioned.ts";
import { COVERAGE_TABLE, MARKS_TABLE, OPEN_DAYS_TABLE, ROLLUP_GRAINS, ROLLUPS, rollupTableName } from "../../src/db/rollups/spec.ts";
import { tableInfo, tableNames } from "../../src/db/tables.ts";
import { migrationsFolder } from "../../src/warehouse/migrate.ts";
import { STREAM_COLUMNS } from "../support/stream-columns.ts";

// docs/design.md "Warehouse contract": names BI users and tests rely on.
const CONTRACT = [
  "projects",
  "project_members",
  "groups",
  "group_members",
  "group_projects",
  "agents",
  "agent_inventory",
  "event_settings",
  "events",
  "spot_values",
  "scalar_values",
  "range_exceptions",
  "range_httpc",
  "range_httpc_by_service",
  "range_sql",
  "range_remote",
  "range_transactions",
  "heap_use",
  "metric_points",
  "visitors",
  "visitors_monthly",
  "tx_calls",
  "stat_transaction",
  "stat_sql",
  "stat_httpc",
  "stat_error",
  "stat_remote",
  "sync_runs",
  "sync_windows",
  "quarantine",
];

describe("warehouse schema", () => {
  it("has every table of the contract", () => {
    expect(tableNames()).toEqual(expect.arrayContaining(CONTRACT));
  });

  it("gives stat_transaction and sync_windows the columns docs/design.md names, with contract types", () => {
    const tx = tableInfo("stat_transaction").types;
    for (const c of [
      "pcode",
      "window_start",
      "window_end",
      "service_hash",
      "service",
      "count",
      "error",
      "time_sum",
      "time_min",
      "time_max",
      "time_avg",
      "apdex",
    ]) {
      expect(tx.has(c), c).toBe(true);
    }
    expect(tx.get("pcode")).toBe("bigint");
    expect(tx.get("service_hash")).toBe("bigint");
    expect(tx.get("window_start")).toBe("timestamp with time zone");
    const ledger = tableInfo("sync_windows").types;
    for (const c of ["stream", "pcode", "window_start", "window_end", "status", "expected_total", "rows_fetched"])
      expect(ledger.has(c), c).toBe(true);
  });

  it("puts extra jsonb on every API-fed table and run_id/synced_at on every one of them", () => {
    const bookkeeping = new Set([
      "sync_runs",
      "sync_windows",
      "sync_attempts",
      "watermarks",
      "quarantine",
      "worker_heartbeats",
      "restatements",
      "verifications",
      "archives",
    ]);
    // Rollups are computed from the API-fed tables, not fed themselves.
    const rollups = new Set([
      ...ROLLUPS.flatMap((r) => ROLLUP_GRAINS.map((g) => rollupTableName(r, g))),
      COVERAGE_TABLE,
      OPEN_DAYS_TABLE,
      MARKS_TABLE,
    ]);
    expect(rollups.size).toBe(15);
    for (const name of tableNames().filter((n) => !bookkeeping.has(n) && !rollups.has(n))) {
      const types = tableInfo(name).types;
      expect(types.get("extra"), name).toBe("jsonb");
      expect(types.get("run_id"), name).toBe("bigint");
      expect(types.get("synced_at"), name).toBe("timestamp with time zone");
    }
  });
});

describe("parser output fits the warehouse", () => {
  // The parser names the project code `project_code` (snake_case of projectCode); the warehouse
  // key is `pcode` (docs/design.md "Warehouse contract"), so the writer renames it.
  const RENAMED = new Set(["project_code"]);

  it("has a column for every row key the parser produces", () => {
    const missing = Object.entries(STREAM_COLUMNS).flatMap(([table, cols]) =>
      cols.filter((c) => !RENAMED.has(c) && !tableInfo(table).types.has(c)).map((c) => `${table}.${c}`),
    );
    expect(missing).toEqual([]);
  });
});

describe("history tables", () => {
  it("each dimension stream's table has <table>_history: its columns but the seen and deleted markers, plus the version's bounds", () => {
    const dimensions = [...new Set(OPERATIONS.filter((op) => op.stream?.kind === "dimension").map((op) => op.stream!.table))];
    expect(dimensions.sort()).toEqual([...VERSIONED_TABLES].sort());
    expect(dimensions).toContain("event_settings");
    for (const table of dimensions) {
      const source = [...tableInfo(table).types].filter(([c]) => !["first_seen_at", "last_seen_at", "deleted_at"].includes(c));
      const history = [...tableInfo(`${table}_history`).types];
      expect(history, table).toEqual([...source, ["valid_from", "timestamp with time zone"], ["valid_to", "timestamp with time zone"]]);
    }
  });
});

describe("migrations", () => {
  const folder = migrationsFolder();
  const files = readdirSync(folder).filter((f) => f.endsWith(".sql"));

  it("match the journal one to one", () => {
    const journal = JSON.parse(readFileSync(join(folder, "meta", "_journal.json"), "utf8")) as { entries: { tag: string }[] };
    expect(journal.entries.map((e) => `${e.tag}.sql`).sort()).toEqual([...files].sort());
  });

  it("never name a schema, so they run in whichever schema is configured", () => {
    for (const f of files) {
      const text = readFileSync(join(folder, f), "utf8");
      expect(text, f).not.toMatch(/"(public|apm|drizzle)"\./);
      expect(text, f).not.toMatch(/\b(public|apm)\./);
      expect(text, f).not.toMatch(/CREATE SCHEMA/i);
    }
  });
});
