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
  refreshDayCoverage,
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

  it("a refresh brings the days of the range's keys up to date, then recomputes the hours of one project, scope and range from the raw rows", () => {
    const points = ROLLUPS.find((r) => r.source === "metric_points")!;
    const [merge, recompute, deleteHours, insertHours] = refreshStatements(points, "series.x");
    expect(deleteHours).toBe(
      `DELETE FROM "rollup_metric_points_hourly" WHERE "pcode" = $1::bigint AND "metric" = $4 AND "series_form" = $5 AND "bucket_start" >= $2::timestamptz AND "bucket_start" < $3::timestamptz`,
    );
    expect(insertHours).toContain(
      `FROM "metric_points" AS h WHERE h."pcode" = $1::bigint AND h."metric" = $4 AND h."series_form" = $5 AND h."ts" >= $2::timestamptz`,
    );
    // Hours without hourly rows add to the days (sums add, extremes compare); hours with them
    // recompute their keys' days from the day's other hours and the new raw rows.
    const stale = `EXISTS (SELECT 1 FROM "rollup_metric_points_hourly" AS s WHERE s."pcode" = $1::bigint AND s."metric" = $4`;
    expect(merge).toContain(`AND NOT ${stale}`);
    expect(merge).toContain(`"value_min" = least(d."value_min", EXCLUDED."value_min")`);
    expect(merge).toContain(`"points" = coalesce(d."points" + EXCLUDED."points", d."points", EXCLUDED."points")`);
    expect(recompute).toContain(`WHERE ${stale}`);
    expect(recompute).toContain(`HAVING max("t") > 0`);
    expect(recompute).toMatch(/^WITH "days" AS \(.*\)\s+DELETE FROM "rollup_metric_points_daily" AS d USING "days" AS z WHERE z."n" = 0/s);
    const stats = ROLLUPS.find((r) => r.source === "stat_transaction")!;
    const [statMerge, statRecompute] = refreshStatements(stats, "stat.transaction");
    expect(statRecompute).toContain(`FROM "rollup_stat_transaction_hourly" AS h WHERE h."pcode" = $1::bigint AND h."bucket_start" >=`);
    expect(statRecompute).toContain('sum("windows") FILTER (WHERE "t" <> 1)');
    // A raw row's share of the apdex count is its count where it has an apdex.
    expect(statRecompute).toContain(`CASE WHEN "apdex" IS NOT NULL THEN "count" END`);
    expect(statMerge).toContain(`FROM "stat_transaction" AS h WHERE h."pcode" = $1::bigint AND h."window_start" >= $2::timestamptz`);
    // Points carry no coverage; an hour of statistics carries its own, from its stream's ledger.
    expect(refreshStatements(points, "series.x").join("\n")).not.toContain("coverage");
    const hours = refreshStatements(stats, "stat.transaction")[3]!;
    expect(hours).toContain(`"apdex_count", "coverage")`);
    expect(hours).toContain(`w."stream" = 'stat.transaction' AND w."pcode" = $1::bigint`);
    expect(hours).toContain(`generate_series($2::timestamptz, $3::timestamptz - interval '1 hour', interval '1 hour')`);
  });

  it("coverage is recomputed per bucket of one stream and project from the ledger, not per row", () => {
    // The days holding the hours [$3, $4), found in SQL as the daily rollup statements find them.
    const insert = refreshDayCoverage();
    expect(insert).toContain(`ON CONFLICT ("stream", "pcode", "grain", "bucket_start") DO UPDATE SET "coverage" = EXCLUDED."coverage"`);
    expect(insert).toContain(
      `generate_series(date_trunc('day', $3::timestamptz, 'UTC'), date_trunc('day', $4::timestamptz - interval '1 microsecond', 'UTC') + interval '1 day' - interval '1 day', interval '1 day')`,
    );
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
