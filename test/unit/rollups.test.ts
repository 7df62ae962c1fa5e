// The rollup declaration drives the SQL: tested as strings here (pg-boss style), against the
// database in test/integration/rollups.test.ts.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { OPERATIONS } from "../../src/catalogue/index.ts";
import { migrationsFolder } from "../../src/db/migrate.ts";
import {
  bucketRange,
  COVERAGE_LOOKBEHIND_MS,
  fillBuckets,
  fillCoverage,
  refreshCoverage,
  refreshStatements,
} from "../../src/db/rollupSql.ts";
import { ROLLUP_GRAINS, ROLLUPS } from "../../src/db/rollups.ts";

const migrations = readdirSync(migrationsFolder())
  .filter((f) => f.endsWith(".sql"))
  .map((f) => readFileSync(join(migrationsFolder(), f), "utf8"))
  .join("\n");

describe("rollup SQL", () => {
  it("a rollup with coverage is written by one windowed stream whose windows span at most the coverage lookbehind", () => {
    for (const spec of ROLLUPS.filter((r) => r.coverage)) {
      const writers = OPERATIONS.filter((op) => op.stream?.table === spec.source);
      expect(
        writers.map((op) => op.stream!.kind),
        spec.source,
      ).toEqual(["aggregate"]);
      expect(writers[0]!.windowLimitMs!, spec.source).toBeLessThanOrEqual(COVERAGE_LOOKBEHIND_MS);
    }
  });

  it("a refresh recomputes the hours of one project, scope and range from the raw rows, then the daily rows of the keys they hold", () => {
    const points = ROLLUPS.find((r) => r.source === "metric_points")!;
    const steps = refreshStatements(points);
    expect(steps.map((s) => s.range)).toEqual(["hourly", "hourly", "hourly", "hourly", "daily"]);
    expect(steps[1]!.text).toBe(
      `DELETE FROM "rollup_metric_points_hourly" WHERE "pcode" = $1::bigint AND "metric" = $4 AND "series_form" = $5 AND "bucket_start" >= $2::timestamptz AND "bucket_start" < $3::timestamptz`,
    );
    expect(steps[2]!.text).toContain(
      `FROM "metric_points" AS h WHERE h."pcode" = $1::bigint AND h."metric" = $4 AND h."series_form" = $5 AND h."ts" >= $2::timestamptz`,
    );
    // The daily rows of the hours' keys go before and after the hours are recomputed (old keys, new keys).
    expect(steps[0]!.text).toBe(steps[3]!.text);
    expect(steps[0]!.text).toContain(`DELETE FROM "rollup_metric_points_daily" AS d`);
    const stats = ROLLUPS.find((r) => r.source === "stat_transaction")!;
    const daily = refreshStatements(stats)[4]!.text;
    expect(daily).toContain(
      `FROM "rollup_stat_transaction_hourly" AS h WHERE h."pcode" = $1::bigint AND h."bucket_start" >= $2::timestamptz`,
    );
    expect(daily).toContain('sum("windows")');
    expect(daily).toContain("NOT EXISTS");
    expect(steps.map((s) => s.text).join("\n")).not.toContain("coverage");
  });

  it("coverage is recomputed per bucket of one stream and project from the ledger, not per row", () => {
    const insert = refreshCoverage("hourly");
    expect(insert).toContain(`ON CONFLICT ("stream", "pcode", "grain", "bucket_start") DO UPDATE SET "coverage" = EXCLUDED."coverage"`);
    expect(insert).toContain(`generate_series($3::timestamptz, $4::timestamptz - interval '1 hour', interval '1 hour')`);
    expect(insert).toContain(`w."status" NOT IN ('failed', 'pruned')`);
  });

  it("buckets are widened to the grid", () => {
    const t = Date.UTC(2026, 0, 5, 10, 30);
    expect(bucketRange("hourly", t, t + 60_000)).toEqual({ from: Date.UTC(2026, 0, 5, 10), to: Date.UTC(2026, 0, 5, 11) });
    expect(bucketRange("daily", t, Date.UTC(2026, 0, 6))).toEqual({ from: Date.UTC(2026, 0, 5), to: Date.UTC(2026, 0, 6) });
  });

  it("the migration fills every rollup from history with the statements the declaration makes", () => {
    for (const spec of ROLLUPS)
      for (const grain of ROLLUP_GRAINS) {
        expect(migrations.includes(fillBuckets(spec, grain)), `${spec.source} ${grain}`).toBe(true);
        const stream = OPERATIONS.find((op) => op.stream?.table === spec.source && op.stream.kind === "aggregate")?.id;
        if (spec.coverage) expect(migrations.includes(fillCoverage(spec, grain, stream!)), `${spec.source} ${grain} coverage`).toBe(true);
      }
  });
});
