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
  dailyRows,
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

  it("a refresh recomputes the hours of one project, scope and range from the raw rows, then writes the complete days and marks the others open", () => {
    const points = ROLLUPS.find((r) => r.source === "metric_points")!;
    const [deleteHours, insertHours, deleteDays, insertDays, ...rest] = refreshStatements(points, "series.x");
    expect(deleteHours).toBe(
      `DELETE FROM "rollup_metric_points_hourly" WHERE "pcode" = $1::bigint AND "metric" = $4 AND "series_form" = $5 AND "bucket_start" >= $2::timestamptz AND "bucket_start" < $3::timestamptz`,
    );
    expect(insertHours).toContain(
      `FROM "metric_points" AS h WHERE h."pcode" = $1::bigint AND h."metric" = $4 AND h."series_form" = $5 AND h."ts" >= $2::timestamptz`,
    );
    // The days holding the range's hours lose their rows of the scope; points carry no coverage,
    // so each of those days is complete: computed again from its hourly rows.
    expect(deleteDays).toBe(
      `DELETE FROM "rollup_metric_points_daily" WHERE "pcode" = $1::bigint AND "metric" = $4 AND "series_form" = $5 AND "bucket_start" >= date_trunc('day', $2::timestamptz, 'UTC') AND "bucket_start" < date_trunc('day', $3::timestamptz - interval '1 microsecond', 'UTC') + interval '1 day'`,
    );
    expect(insertDays).toContain(
      `SELECT $1::bigint AS "pcode", $4::text AS "metric", $5::text AS "series_form", d AS "day" FROM generate_series(`,
    );
    expect(insertDays).toContain(`JOIN "rollup_metric_points_hourly" AS h ON h."pcode" = o."pcode" AND h."metric" = o."metric"`);
    expect(insertDays).toContain(`min("value_min"), max("value_max")`);
    expect(rest).toEqual([]);
    expect(refreshStatements(points, "series.x").join("\n")).not.toContain("coverage");
    // An hour of statistics carries its coverage, from its stream's ledger; a day is written from
    // its hours only once the ledger covers all of it, and is open until then.
    const stats = ROLLUPS.find((r) => r.source === "stat_transaction")!;
    const statements = refreshStatements(stats, "stat.transaction");
    expect(statements).toHaveLength(5);
    // The days' coverage and the open days in one statement: the coverage rows are read once.
    const [, hours, dayCoverage, , statDays] = statements;
    const open = dayCoverage!;
    expect(hours).toContain(`"apdex_count", "coverage")`);
    expect(hours).toContain(`w."stream" = 'stat.transaction' AND w."pcode" = $1::bigint`);
    expect(hours).toContain(`generate_series($2::timestamptz, $3::timestamptz - interval '1 hour', interval '1 hour')`);
    expect(dayCoverage).toContain(
      `WITH "d" AS (${refreshDayCoverage("stat.transaction")}\nRETURNING "bucket_start", "coverage" >= 1 AS "complete")`,
    );
    expect(statDays).toContain(
      `FROM "rollup_coverage" AS c WHERE c."stream" = 'stat.transaction' AND c."grain" = 'daily' AND c."pcode" = $1::bigint`,
    );
    expect(statDays).toContain(`WHERE o."coverage" >= 1 GROUP BY h."pcode", o."day", h."service_hash"`);
    expect(statDays).toContain(`sum("count")::bigint`);
    expect(open).toContain(`DELETE FROM "rollup_open_days" AS o USING "d" WHERE o."source" = 'stat_transaction'`);
    expect(open).toContain(
      `INSERT INTO "rollup_open_days" ("source", "pcode", "bucket_start") SELECT 'stat_transaction', $1::bigint, d."bucket_start" FROM "d" WHERE NOT d."complete"`,
    );
  });

  it("the statistics' daily views read the daily table and the open days computed from the hourly rows", () => {
    for (const spec of ROLLUPS.filter((r) => r.coverage)) {
      expect(migrations.includes(`FROM (\n${dailyRows(spec)}\n) AS r`), spec.source).toBe(true);
      expect(dailyRows(spec)).toContain(`"rollup_open_days" AS o WHERE o."source" = '${spec.source}'`);
    }
  });

  it("coverage is recomputed per bucket of one stream and project from the ledger, not per row", () => {
    // The days holding the hours [$2, $3), found in SQL as the daily rollup statements find them.
    const insert = refreshDayCoverage("stat.sql");
    expect(insert).toContain(`ON CONFLICT ("stream", "pcode", "grain", "bucket_start") DO UPDATE SET "coverage" = EXCLUDED."coverage"`);
    expect(insert).toContain(
      `generate_series(date_trunc('day', $2::timestamptz, 'UTC'), date_trunc('day', $3::timestamptz - interval '1 microsecond', 'UTC') + interval '1 day' - interval '1 day', interval '1 day')`,
    );
    expect(insert).toContain(`w."stream" = 'stat.sql' AND w."pcode" = $1::bigint`);
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
