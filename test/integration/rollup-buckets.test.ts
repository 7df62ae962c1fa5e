// How a raw row finds its bucket. A UTC day is 24 hours whatever the session's time zone: where the
// session's zone keeps daylight saving (a server's TimeZone, a BI tool's session), `day + interval
// '1 day'` is 23 hours on the day its clocks go forward and 25 on the day they go back, so a daily
// bucket left out an hour of rows, or counted an hour of the next day too, and its coverage was
// short. The views, the refresh and the upgrade's marks are read here from a session in New York.
// And a row is joined to the marks of its own hour, not tested against every mark of its project.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { refreshRollups } from "../../src/db/rollups/refresh.ts";
import { rollupWriter } from "../../src/db/views.ts";
import { migrationsFolder } from "../../src/warehouse/migrate.ts";
import { DAY, type EngineHarness, startEngineHarness } from "../support/engine-harness.ts";
import { TEMPLATE_SCHEMA } from "../support/global-setup.ts";
import { coverageDiffs, markRollupHours, rollupDiffs } from "../support/rollup-checks.ts";

const SPRING = Date.UTC(2026, 2, 8); // New York's clocks go forward
const FALL = Date.UTC(2026, 10, 1); // and back
const DAYS = [SPRING, FALL];
const WRITES = [
  { table: "stat_transaction", stream: "stat.transaction" },
  { table: "stat_sql", stream: "stat.sql" },
  { table: "metric_points", stream: "series.apdex" },
];

let h: EngineHarness;
let ny: postgres.Sql;

beforeAll(async () => {
  h = await startEngineHarness({ now: FALL + 3 * DAY, burstKeys: 0, projects: 1, env: { APM_REFRESH_ALONG: "0" } });
  const streams = WRITES.map((w) => w.stream);
  for (const day of DAYS) {
    const r = await h.run({ command: "backfill", mode: { kind: "backfill", from: day - DAY, to: day + 2 * DAY }, streams });
    expect(r.exitCode).toBe(0);
  }
  ny = postgres(h.db.url, { max: 3, onnotice: () => {}, connection: { TimeZone: "America/New_York", search_path: TEMPLATE_SCHEMA } });
  const [zone] = await ny<{ tz: string }[]>`SELECT current_setting('TimeZone') AS tz`;
  expect(zone!.tz).toBe("America/New_York");
}, 300_000);

afterAll(async () => {
  await ny?.end();
  await h?.close();
});

const markAll = async () => {
  for (const w of WRITES)
    for (const day of DAYS) await markRollupHours(h.sql, { ...w, pcode: h.pcodes[0]!, fromMs: day - DAY, toMs: day + 2 * DAY });
};

describe("rollups read and refreshed in a time zone with daylight saving", () => {
  it("the views compute each marked day over its 24 UTC hours", async () => {
    await markAll();
    expect(await rollupDiffs(ny)).toEqual([]);
    expect(await coverageDiffs(ny)).toEqual([]);
  });

  it("the refresh stores each day and its coverage over its 24 UTC hours", async () => {
    await markAll();
    const r = await refreshRollups(ny, rollupWriter);
    expect(r.days).toBeGreaterThanOrEqual(DAYS.length * 3);
    expect(await rollupDiffs(ny, { table: true })).toEqual([]);
    expect(await rollupDiffs(ny)).toEqual([]);
    expect(await coverageDiffs(ny)).toEqual([]);
  });

  it("the upgrade marks the days whose length differs from 24 hours in the session's zone, and no other", async () => {
    const file = readdirSync(migrationsFolder()).find((f) => f.startsWith("0025_"))!;
    const statements = readFileSync(join(migrationsFolder(), file), "utf8").split("--> statement-breakpoint");
    const marked = async (sql: postgres.Sql) => {
      await h.sql`DELETE FROM rollup_marks`;
      for (const s of statements) await sql.unsafe(s);
      const rows = await h.sql<{ source: string; day: string }[]>`
        SELECT DISTINCT source, to_char(date_trunc('day', hour, 'UTC') AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day FROM rollup_marks ORDER BY 1, 2`;
      return rows.map((r) => `${r.source} ${r.day}`);
    };
    expect(await marked(h.sql)).toEqual([]);
    expect(await marked(ny)).toEqual(
      ["metric_points", "stat_sql", "stat_transaction"].flatMap((s) => [`${s} 2026-03-08`, `${s} 2026-11-01`]),
    );
  });
});

interface PlanNode {
  "Rows Removed by Join Filter"?: number;
  Plans?: PlanNode[];
}

const removedByJoinFilters = (node: PlanNode): number =>
  (node["Rows Removed by Join Filter"] ?? 0) + (node.Plans ?? []).reduce((n, p) => n + removedByJoinFilters(p), 0);

describe("an hourly view with many hours marked", () => {
  it("meets each raw row and each stored hour with the marks of its own hour only (was: every mark of its project, each tested)", async () => {
    await markAll();
    const [points] = await h.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM metric_points`;
    expect(points!.n).toBeGreaterThan(1000);
    const [hours] = await h.sql<{ n: number }[]>`SELECT count(DISTINCT hour)::int AS n FROM rollup_marks WHERE source = 'metric_points'`;
    expect(hours!.n).toBeGreaterThanOrEqual(2 * 72);
    const [plan] = await h.sql.unsafe<{ "QUERY PLAN": [{ Plan: PlanNode }] }[]>(
      `EXPLAIN (ANALYZE, TIMING OFF, FORMAT JSON) SELECT count(*), sum("points") FROM "metric_points_hourly"`,
    );
    expect(removedByJoinFilters(plan!["QUERY PLAN"][0].Plan)).toBeLessThanOrEqual(points!.n);
    expect(await rollupDiffs(h.sql)).toEqual([]);
  });
});
