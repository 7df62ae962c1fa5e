// Retention (issue 18 item 3): the setting parsed like the others (exit 2 naming it, did you mean),
// and what each table keeps: the most specific key of each stream, the longest of a table's
// streams, rollups on their own; where a backfill and a sync may start.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { prunableTables, rollupSource } from "../../src/config/retention-keys.ts";
import { ConfigError, loadConfig } from "../../src/config.ts";
import { formatRetention, retainedStart, retentionProblem, retentionStart, tableRetention } from "../../src/warehouse/retention.ts";

const DAY = 86_400_000;
const dir = mkdtempSync(join(tmpdir(), "apm-retention-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const problems = (opts: Parameters<typeof loadConfig>[0]) => {
  try {
    loadConfig(opts);
    return [];
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    return [...e.problems];
  }
};

describe("the retention setting", () => {
  it("reads the comma form (APM_RETENTION) and the file's object form, in days, weeks and years", () => {
    expect(loadConfig({ env: { APM_RETENTION: "stat=400d, range=12w,points=30d,rollup.daily=5y" } }).retention).toEqual({
      stat: 400 * DAY,
      range: 84 * DAY,
      points: 30 * DAY,
      "rollup.daily": 5 * 365 * DAY,
    });
    const path = join(dir, "app.json");
    writeFileSync(path, JSON.stringify({ retention: { "stat.sql": "30d", rollup: "2y" } }));
    expect(loadConfig({ env: {}, configFile: path }).retention).toEqual({ "stat.sql": 30 * DAY, rollup: 730 * DAY });
    expect(loadConfig({ env: {} }).retention).toEqual({});
  });

  it("refuses a retention whose start no clock holds (99999999y) at load, and takes up to 1000y", () => {
    expect(problems({ env: { APM_RETENTION: "stat=99999999y,range=365001d" } })).toEqual([
      'APM_RETENTION: stat: expected a retention like 400d, 12w or 5y (days, weeks, years of 365 days; at least 1d, at most 1000y; unset keeps everything), got "99999999y"',
      'APM_RETENTION: range: expected a retention like 400d, 12w or 5y (days, weeks, years of 365 days; at least 1d, at most 1000y; unset keeps everything), got "365001d"',
    ]);
    expect(loadConfig({ env: { APM_RETENTION: "stat=1000y,range=365000d" } }).retention).toEqual({
      stat: 365_000 * DAY,
      range: 365_000 * DAY,
    });
  });

  it("names every problem with its setting: unknown keys (did you mean), keys without partitions, bad durations", () => {
    expect(problems({ env: { APM_RETENTION: "stats=30d,visitors.m=1y,stat.sql=30m,range,stat=1d,stat=2d" } })).toEqual([
      'APM_RETENTION: unknown stream, prefix, kind or rollup "stats" (did you mean stat?)',
      "APM_RETENTION: visitors.m writes no time-partitioned table (visitors_monthly keeps no history to drop)",
      'APM_RETENTION: stat.sql: expected a retention like 400d, 12w or 5y (days, weeks, years of 365 days; at least 1d, at most 1000y; unset keeps everything), got "30m"',
      'APM_RETENTION: range: expected a retention like 400d, 12w or 5y (days, weeks, years of 365 days; at least 1d, at most 1000y; unset keeps everything), got ""',
      "APM_RETENTION: stat is given twice",
    ]);
    const path = join(dir, "bad.json");
    writeFileSync(path, JSON.stringify({ retention: { "rollup.dialy": "5y" } }));
    expect(problems({ env: {}, configFile: path })).toEqual([
      `config file ${path}: retention: unknown stream, prefix, kind or rollup "rollup.dialy" (did you mean rollup.daily?)`,
    ]);
  });
});

describe("what a table keeps", () => {
  const table = (name: string) => prunableTables().find((t) => t.table === name)!;
  const keep = (retention: Record<string, number>, name: string) => tableRetention(retention, table(name));

  it("lists every partitioned table, each with the streams that write it", () => {
    expect(table("heap_use").sources.map((s) => s.id)).toEqual(["range.heap_use.avg", "range.heap_use.max"]);
    expect(table("visitors").sources.map((s) => s.id)).toEqual(["visitors.5m", "visitors.h", "visitors.d"]);
    expect(table("metric_points").sources.length).toBe(20);
    expect(table("events").sources[0]!.names).toEqual(["project.event_history", "project", "points"]);
  });

  it("by the most specific key of each stream: id, then the longest prefix, then its kind", () => {
    const r = { stat: 400 * DAY, "stat.sql": 30 * DAY, points: 30 * DAY, aggregate: 7 * DAY };
    expect(keep(r, "stat_sql")).toEqual({ table: "stat_sql", ms: 30 * DAY, why: "stat.sql=30d" });
    expect(keep(r, "stat_transaction")).toEqual({ table: "stat_transaction", ms: 400 * DAY, why: "stat=400d" });
    expect(keep(r, "range_sql")).toEqual({ table: "range_sql", ms: 7 * DAY, why: "aggregate=1w" });
    expect(keep(r, "events").ms).toBe(30 * DAY);
  });

  it("a table of several streams keeps the longest of theirs, and everything while one has none", () => {
    expect(keep({ "series.apdex": 30 * DAY }, "metric_points")).toEqual({
      table: "metric_points",
      ms: null,
      why: "series.thread_count has no retention",
    });
    expect(keep({ series: 30 * DAY, "series.apdex": 90 * DAY }, "metric_points")).toEqual({
      table: "metric_points",
      ms: 90 * DAY,
      why: "series.apdex=90d",
    });
    expect(keep({}, "stat_sql").ms).toBeNull();
  });

  it("rollups keep their own: a rollup table is one more entry, not touched by stream keys", () => {
    // The declaration prune works from gives the real rollup table its rollup key.
    const daily = prunableTables().find((t) => t.table === "rollup_stat_sql_daily")!;
    expect(daily.sources).toEqual([rollupSource("rollup.daily")]);
    expect(tableRetention({ stat: 30 * DAY, rollup: 365 * DAY, "rollup.daily": 5 * 365 * DAY }, daily)).toMatchObject({
      ms: 5 * 365 * DAY,
      why: "rollup.daily=5y",
    });
    expect(tableRetention({ rollup: 365 * DAY }, daily)).toMatchObject({ ms: 365 * DAY, why: "rollup=1y" });
    expect(tableRetention({ stat: 30 * DAY }, daily).ms).toBeNull();
  });

  it("a statistic's hourly rollup keeps its hours as long as the raw rows its view also reads, and marks no ledger window", () => {
    const hourly = prunableTables().find((t) => t.table === "rollup_stat_sql_hourly")!;
    // Its table holds the hours of split leaves: dropped before the raw rows, the view would lose them.
    expect(tableRetention({ stat: 400 * DAY, "rollup.hourly": 90 * DAY }, hourly)).toMatchObject({ ms: 400 * DAY, why: "stat=400d" });
    expect(tableRetention({ stat: 30 * DAY, "rollup.hourly": 90 * DAY }, hourly)).toMatchObject({ ms: 90 * DAY, why: "rollup.hourly=90d" });
    expect(tableRetention({ "rollup.hourly": 90 * DAY }, hourly).ms).toBeNull();
    expect(hourly.writers).toEqual([]);
    expect(prunableTables().find((t) => t.table === "stat_sql")!.writers).toEqual(["stat.sql"]);
    // The metric points' hourly rollup is finer than its raw rows: its own key alone.
    const points = prunableTables().find((t) => t.table === "rollup_metric_points_hourly")!;
    expect(points.sources).toEqual([rollupSource("rollup.hourly")]);
    // A stream's retention is its raw table's, not the rollup's that reads along.
    expect(retainedStart({ stat: 30 * DAY, "rollup.hourly": 90 * DAY }, "stat.sql", 0, Date.UTC(2026, 10, 24))).toBe(Date.UTC(2026, 9, 25));
  });

  it("formats a retention as it was likely written", () => {
    expect([400 * DAY, 84 * DAY, 365 * DAY, 730 * DAY, 3 * DAY].map(formatRetention)).toEqual(["400d", "12w", "1y", "2y", "3d"]);
  });
});

describe("where the retention starts", () => {
  const now = Date.UTC(2026, 10, 24, 9, 30);
  it("at the start of the UTC day `retention` ago; a sync starts no earlier, a backfill before it is refused", () => {
    expect(retentionStart(now, 30 * DAY)).toBe(Date.UTC(2026, 9, 25));
    const r = { stat: 30 * DAY };
    expect(retainedStart(r, "stat.sql", now - 90 * DAY, now)).toBe(Date.UTC(2026, 9, 25));
    expect(retainedStart(r, "stat.sql", now - 2 * DAY, now)).toBe(now - 2 * DAY);
    expect(retainedStart(r, "range.sql", now - 90 * DAY, now)).toBe(now - 90 * DAY);
    expect(retentionProblem(r, ["stat.sql", "range.sql"], now - 30 * DAY, now)).toBeNull();
    expect(retentionProblem(r, ["stat.sql", "range.sql"], now - 31 * DAY, now)).toBe(
      "--from 2026-10-24T09:30:00.000Z reaches before what the retention keeps (APM_RETENTION, file key retention): stat.sql (stat=30d); " +
        "that time is pruned, or would be at the next prune. Backfill from 2026-10-25 on, or lengthen the retention",
    );
  });
});
