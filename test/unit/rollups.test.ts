// The rollup declarations (src/db/rollups/spec.ts) and what the views are built from them. The SQL
// itself is tested by what it does to a database (test/integration/rollups.test.ts).
import { getTableConfig, type PgTable } from "drizzle-orm/pg-core";
import { describe, expect, it } from "vitest";
import { OPERATIONS } from "../../src/catalogue/index.ts";
import { ROLLUPS } from "../../src/db/rollups/spec.ts";
import { COVERAGE_LOOKBEHIND_MS } from "../../src/db/rollups/sql.ts";
import { warehouse } from "../../src/db/tables.ts";
import { rollupWriter, viewStatements } from "../../src/db/views.ts";

describe("rollup declarations", () => {
  it("a rollup with coverage is written by one windowed stream whose windows span at most the coverage lookbehind", () => {
    for (const spec of ROLLUPS.filter((r) => r.coverage)) {
      const writers = OPERATIONS.filter((op) => op.stream?.table === spec.source);
      expect(
        writers.map((op) => op.stream!.kind),
        spec.source,
      ).toEqual(["aggregate"]);
      expect(writers[0]!.windowLimitMs!, spec.source).toBeLessThanOrEqual(COVERAGE_LOOKBEHIND_MS);
      expect(rollupWriter(spec.source)).toBe(writers[0]!.id);
    }
  });

  it("the raw table of a rollup that reads its hours from the raw rows is indexed by time (readByTime), no other", () => {
    const indexed = (Object.values(warehouse) as PgTable[])
      .map((t) => getTableConfig(t))
      .filter((c) => c.indexes.some((i) => i.config.name === `${c.name}_window_start_idx`))
      .map((c) => c.name);
    expect(indexed.sort()).toEqual(
      ROLLUPS.filter((r) => r.hoursFromRaw)
        .map((r) => r.source)
        .sort(),
    );
  });

  it("every measure a view shows as stored is a measure of its rollup; every view is defined once", () => {
    for (const spec of ROLLUPS)
      for (const c of spec.view) if (typeof c === "string") expect(Object.keys(spec.measures), `${spec.source}: ${c}`).toContain(c);
    const names = viewStatements().map((s) => /^CREATE OR REPLACE VIEW "([^"]+)"/.exec(s)?.[1]);
    expect(names.every((n) => n !== undefined)).toBe(true);
    expect(new Set(names).size).toBe(names.length);
    expect(names).toEqual(expect.arrayContaining(["stat_transaction_hourly", "metric_points_daily", "stream_freshness", "ledger_gaps"]));
  });
});
