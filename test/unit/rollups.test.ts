// The rollup declaration drives the SQL: tested as strings here (pg-boss style), against the
// database in test/integration/rollups.test.ts.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { OPERATIONS } from "../../src/catalogue/index.ts";
import {
  COVERAGE_LOOKBEHIND_MS,
  coverageColumn,
  dayCoverageColumn,
  fillCoverage,
  hoursCovered,
  refreshHourCoverage,
} from "../../src/db/coverageSql.ts";
import { migrationsFolder } from "../../src/db/migrate.ts";
import { bucketRange, closeDays, dailyRows, fillBuckets, hourlyRows, keepHours, refreshStatements } from "../../src/db/rollupSql.ts";
import { ROLLUP_GRAINS, ROLLUPS, rollupTableName } from "../../src/db/rollups.ts";

const migrations = readdirSync(migrationsFolder())
  .filter((f) => f.endsWith(".sql"))
  .sort()
  .map((f) => readFileSync(join(migrationsFolder(), f), "utf8"))
  .join("\n");

/** The last definition of view `name` in the migrations (in the order they run). */
function latestView(name: string): string {
  const start = migrations.lastIndexOf(`CREATE OR REPLACE VIEW "${name}" AS`);
  expect(start, name).toBeGreaterThanOrEqual(0);
  return migrations.slice(start, migrations.indexOf(";\n", start));
}

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
    const { deleteHours, insertHours, coverHours, days } = refreshStatements(points, "series.x");
    const [deleteDays, insertDays, ...rest] = days;
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
      `SELECT $1::bigint AS "pcode", $4::text AS "metric", $5::text AS "series_form", d."at" AS "day" FROM generate_series(`,
    );
    expect(insertDays).toContain(`JOIN "rollup_metric_points_hourly" AS h ON h."pcode" = o."pcode" AND h."metric" = o."metric"`);
    expect(insertDays).toContain(`min("value_min"), max("value_max")`);
    expect(rest).toEqual([]);
    expect(coverHours).toBeNull();
    expect([deleteHours, insertHours, ...days].join("\n")).not.toContain("coverage");
    // The statistics' raw rows are hourly: a write sums into the hourly table only the rows that are
    // not whole hours (next test), and keeps each hour's coverage, from its stream's ledger; a day
    // is written from its raw rows only once its hours are all covered, and is open until then.
    const stats = ROLLUPS.find((r) => r.source === "stat_transaction")!;
    const statements = refreshStatements(stats, "stat.transaction");
    expect(statements.days).toHaveLength(2);
    const [reopen, statDays] = statements.days;
    expect(statements.deleteHours).toBe(
      `DELETE FROM "rollup_stat_transaction_hourly" WHERE "pcode" = $1::bigint AND "bucket_start" >= $2::timestamptz AND "bucket_start" < $3::timestamptz`,
    );
    // The hours' coverage, and one row when the days may be left as they are: the hours were not
    // covered before, and each day is open and stays short of 24 covered hours.
    const hourCoverage = refreshHourCoverage("stat.transaction");
    expect(hourCoverage).toContain(`w."stream" = 'stat.transaction' AND w."pcode" = $1::bigint`);
    expect(hourCoverage).toContain(`generate_series($2::timestamptz, $3::timestamptz - interval '1 hour', interval '1 hour')`);
    expect(statements.coverHours).toContain(`"h" AS (${hourCoverage}\nRETURNING "bucket_start", "coverage")`);
    expect(statements.coverHours).toContain(`FROM "rollup_open_days" AS o WHERE o."source" = 'stat_transaction'`);
    expect(statements.coverHours).toContain(`< 24) AS "open"`);
    expect(statements.coverHours).toContain(`WHERE t."open" AND (SELECT "covered" FROM "before") = 0`);
    // The days the range touches are opened: their rows and coverage rows go, and they are marked.
    expect(reopen).toContain(
      `DELETE FROM "rollup_stat_transaction_daily" WHERE "pcode" = $1::bigint AND "bucket_start" >= date_trunc('day', $2::timestamptz, 'UTC')`,
    );
    expect(reopen).toContain(
      `DELETE FROM "rollup_coverage" WHERE "stream" = 'stat.transaction' AND "grain" = 'daily' AND "pcode" = $1::bigint`,
    );
    expect(reopen).toContain(
      `INSERT INTO "rollup_open_days" ("source", "pcode", "bucket_start") SELECT 'stat_transaction', $1::bigint, d."at" FROM generate_series(`,
    );
    // Then those the ledger covers wholly (their hours' coverage sums to 24) are unmarked, written
    // from their raw rows, with a coverage row (the sum of its hours' / 24), by closeDays.
    expect(statDays).toBe(closeDays(stats, "stat.transaction", "touched"));
    expect(statDays).toContain(
      `DELETE FROM "rollup_open_days" AS d WHERE d."source" = 'stat_transaction' AND d."bucket_start" >= date_trunc('day', $2::timestamptz, 'UTC')`,
    );
    expect(statDays).toContain(`d."pcode" = $1::bigint AND ${hoursCovered("'stat.transaction'", 'd."pcode"', 'd."bucket_start"')} >= 24`);
    expect(statDays).toContain(
      `SELECT 'stat.transaction', o."pcode", 'daily', o."day", ${hoursCovered("'stat.transaction'", 'o."pcode"', 'o."day"')} / 24 FROM "closed" AS o`,
    );
    expect(statDays).toContain(`JOIN "stat_transaction" AS h ON h."pcode" = o."pcode" AND h."window_start" >= o."day"`);
    expect(statDays).toContain(`FROM "closed" AS o JOIN "stat_transaction" AS h`);
    expect(statDays).toContain(`GROUP BY h."pcode", o."day", h."service_hash"`);
    expect(statDays).toContain(`count(*)::bigint, sum("count")::bigint`);
  });

  it("open days are closed with their coverage: before a prune's cut, or once their hours are all covered", () => {
    const stats = ROLLUPS.find((r) => r.source === "stat_error")!;
    const before = closeDays(stats, "stat.error", "before");
    expect(before).toContain(`DELETE FROM "rollup_open_days" AS d WHERE d."source" = 'stat_error' AND d."bucket_start" < $1::timestamptz`);
    const complete = closeDays(stats, "stat.error", "complete");
    // The day's hours are read by the closed mark's own columns (qualified: the coverage table has
    // columns of the same names).
    expect(complete).toContain(`d."pcode" = $1::bigint AND ${hoursCovered("'stat.error'", 'd."pcode"', 'd."bucket_start"')} >= 24`);
    for (const sql of [before, complete]) {
      expect(sql).toContain(`INSERT INTO "rollup_stat_error_daily"`);
      expect(sql).toContain(
        `SELECT 'stat.error', o."pcode", 'daily', o."day", ${hoursCovered("'stat.error'", 'o."pcode"', 'o."day"')} / 24 FROM "closed" AS o`,
      );
    }
  });

  it("a statistic's hourly view reads its raw rows of whole hours as buckets of their start, and adds its table's hours (split leaves, pruned months)", () => {
    for (const spec of ROLLUPS.filter((r) => r.hoursFromRaw)) {
      const rows = hourlyRows(spec);
      const view = latestView(`${spec.source}_hourly`);
      expect(view.includes(`FROM (\n${rows}\n) AS r`), spec.source).toBe(true);
      // Each row's coverage read by the coverage table's key.
      const stream = OPERATIONS.find((op) => op.stream?.table === spec.source)!.id;
      expect(view).toContain(coverageColumn(stream));
      const whole = `h."window_start" = date_trunc('hour', h."window_start", 'UTC') AND h."window_end" >= h."window_start" + interval '1 hour'`;
      expect(rows).toContain(`SELECT h."pcode", h."window_start", `);
      expect(rows).toContain(`, 1::bigint, "count"`);
      expect(rows).toMatch(new RegExp(`FROM "${spec.source}" AS h WHERE ${whole.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}$`));
      expect(rows).toContain(`FROM "${rollupTableName(spec, "hourly")}"\nUNION ALL\n`);
      // Read for all projects by time through an index on it.
      expect(migrations).toContain(`CREATE INDEX "${spec.source}_window_start_idx" ON "${spec.source}" USING btree ("window_start")`);
      // The sync sums into the table only the rows that are not whole hours; prune keeps whole ones.
      const { insertHours } = refreshStatements(spec, "x");
      expect(insertHours).toContain(`h."window_start" < $3::timestamptz AND NOT (${whole})`);
      expect(keepHours(spec)).toContain(
        `h."window_start" >= coalesce($2::timestamptz, '-infinity') AND h."window_start" < $1::timestamptz AND ${whole}`,
      );
    }
    // An apdex-weighted measure over one row: the row's values, and nothing where it has no apdex.
    expect(hourlyRows(ROLLUPS[0]!)).toContain(`"apdex" * "count", CASE WHEN "apdex" IS NOT NULL THEN "count" END FROM`);
  });

  it("the statistics' daily views read the daily table and the open days computed from the raw rows", () => {
    for (const spec of ROLLUPS.filter((r) => r.coverage)) {
      const stream = OPERATIONS.find((op) => op.stream?.table === spec.source)!.id;
      const view = latestView(`${spec.source}_daily`);
      expect(view.includes(`FROM (\n${dailyRows(spec)}\n) AS r`), spec.source).toBe(true);
      // A closed day's coverage row, else its hours'.
      expect(view).toContain(dayCoverageColumn(stream));
      expect(dailyRows(spec)).toContain(`"rollup_open_days" AS o WHERE o."source" = '${spec.source}'`);
    }
  });

  it("coverage is recomputed per bucket of one stream and project from the ledger, not per row", () => {
    const insert = refreshHourCoverage("stat.sql");
    expect(insert).toContain(`ON CONFLICT ("stream", "pcode", "grain", "bucket_start") DO UPDATE SET "coverage" = EXCLUDED."coverage"`);
    // The days holding the hours [$2, $3), found in SQL as the daily rollup statements find them.
    const [reopen] = refreshStatements(ROLLUPS.find((r) => r.source === "stat_sql")!, "stat.sql").days;
    expect(reopen).toContain(
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

  it("migration 0007 filled every rollup from history with the statements the declaration makes", () => {
    for (const spec of ROLLUPS)
      for (const grain of ROLLUP_GRAINS) {
        expect(migrations.includes(fillBuckets(spec, grain)), `${spec.source} ${grain}`).toBe(true);
        const stream = OPERATIONS.find((op) => op.stream?.table === spec.source && op.stream.kind === "aggregate")?.id;
        if (spec.coverage) expect(migrations.includes(fillCoverage(spec, grain, stream!)), `${spec.source} ${grain} coverage`).toBe(true);
      }
  });
});
