// Hourly and daily rollups, maintained after the write as TimescaleDB's continuous aggregates are:
// a window's transaction only marks the hours it touched (../ledger/windowStatements.ts); one serialized refresher
// (refresh.ts: at the end of a run, each scheduled tick, before prune) recomputes the marked
// buckets from the raw rows; the views read the materialised buckets where no mark is, and the raw
// rows where one is, so that every query is exact at every commit (views.ts). Each rollup is
// declared once here; its tables, refresh and views come from the declaration.
// The statistics' raw rows are hourly already: their hourly view reads them (the hourly table holds
// only split windows' leaves, summed, and the hours whose raw months prune dropped); finer raw rows
// (metric points) are summed into the hourly table.

import { getTableName } from "drizzle-orm";
import { metricPoints } from "../../catalogue/series.ts";
import { statError, statHttpc, statRemote, statSql, statTransaction } from "../../catalogue/stats.ts";

/** How one measure is computed over the raw rows of an hourly bucket; the daily one re-aggregates it. */
export interface RollupMeasure {
  /** count(*), sum, min or max of `of` (times `times`) over the rows where `when` is not null. */
  readonly agg: "count" | "sum" | "min" | "max";
  readonly of?: string;
  readonly times?: string;
  readonly when?: string;
  /** Column type: bigint for counts (exact), double precision otherwise. */
  readonly type: "bigint" | "double precision";
}

/** A column of a rollup's views after its bucket columns: a measure as stored, or a value computed from the row (alias r). */
export type ViewColumn = string | readonly [name: string, expression: string];

export interface RollupSpec {
  /** The raw table's name (getTableName of the family's table), e.g. `stat_transaction`. */
  readonly source: string;
  /** Its time column a row is bucketed by (UTC): a window's start, a point's time. */
  readonly time: string;
  /** Columns a stream writes as constants (metric, series_form): a write pins them, as pcode. */
  readonly scope: readonly string[];
  /** The rows' keys within a bucket (types from the raw table). */
  readonly keys: readonly string[];
  /** Names carried along, max() over the bucket (one value per key in practice). */
  readonly labels: readonly string[];
  readonly measures: Readonly<Record<string, RollupMeasure>>;
  /**
   * The table is written by one stream, whose ledger says how much of a bucket is fetched
   * (`coverage`, 0..1). Tables that several streams write alike (metric_points: the per-agent
   * series and its listed-agents form) carry none.
   */
  readonly coverage: boolean;
  /**
   * The raw rows are hourly already (the API's statistics: a window's row per key, an hour or a
   * split leaf of one): the hourly views group the rows of whole hours when read, and the table
   * holds only the other hours (split leaves' hours, summed by the refresher; hours whose raw months
   * `prune` dropped); days are computed from the raw rows. Otherwise (finer rows) the hourly table
   * is kept by the refresher and days are computed from it.
   */
  readonly hoursFromRaw: boolean;
  /** The views' columns after the bucket columns, in their order (a view's columns never change order: CREATE OR REPLACE). */
  readonly view: readonly ViewColumn[];
}

const count: RollupMeasure = { agg: "count", type: "bigint" };
const sum = (of: string, type: RollupMeasure["type"] = "double precision"): RollupMeasure => ({ agg: "sum", of, type });
const min = (of: string): RollupMeasure => ({ agg: "min", of, type: "double precision" });
const max = (of: string): RollupMeasure => ({ agg: "max", of, type: "double precision" });

const ratio = (name: string, of: string, by: string): ViewColumn => [
  name,
  `r."${of}"::double precision / NULLIF(r."${by}", 0)::double precision`,
];
const perCount = (name: string, of: string): ViewColumn => [name, `r."${of}" / NULLIF(r."count", 0)::double precision`];
const timingView: readonly ViewColumn[] = [
  "windows",
  "count",
  "error",
  "time_sum",
  perCount("time_avg", "time_sum"),
  "time_min",
  "time_max",
  ratio("error_rate", "error", "count"),
];

// count/error/time of the transaction, sql and httpc statistics: sums, and the extremes.
const timing = {
  windows: count,
  count: sum("count", "bigint"),
  error: sum("error", "bigint"),
  time_sum: sum("time_sum"),
  time_min: min("time_min"),
  time_max: max("time_max"),
};

export const ROLLUPS: readonly RollupSpec[] = [
  {
    source: getTableName(statTransaction),
    time: "window_start",
    scope: [],
    keys: ["service_hash"],
    labels: ["service"],
    measures: {
      ...timing,
      sql_count: sum("sql_count"),
      httpc_count: sum("httpc_count"),
      // Apdex weighted by transactions, over the windows that have one: sum(apdex * count) / sum(count).
      apdex_weighted: { agg: "sum", of: "apdex", times: "count", type: "double precision" },
      apdex_count: { agg: "sum", of: "count", when: "apdex", type: "bigint" },
    },
    coverage: true,
    hoursFromRaw: true,
    view: [...timingView, "sql_count", "httpc_count", ["apdex", `r."apdex_weighted" / NULLIF(r."apdex_count", 0)::double precision`]],
  },
  {
    source: getTableName(statSql),
    time: "window_start",
    scope: [],
    keys: ["sql_hash", "dbc_hash", "service_hash"],
    labels: ["sql", "db", "service"],
    measures: { ...timing, fetch_count: sum("fetch_count"), fetch_time: sum("fetch_time") },
    coverage: true,
    hoursFromRaw: true,
    view: [...timingView, "fetch_count", "fetch_time"],
  },
  {
    source: getTableName(statHttpc),
    time: "window_start",
    scope: [],
    keys: ["url_hash", "host_hash", "port", "service_hash"],
    labels: ["url", "host", "service"],
    measures: timing,
    coverage: true,
    hoursFromRaw: true,
    view: timingView,
  },
  {
    source: getTableName(statError),
    time: "window_start",
    scope: [],
    keys: ["class_hash", "msg_hash", "service_hash"],
    labels: ["class", "msg", "service"],
    measures: { windows: count, count: sum("count", "bigint") },
    coverage: true,
    hoursFromRaw: true,
    view: ["windows", "count"],
  },
  {
    source: getTableName(statRemote),
    time: "window_start",
    scope: [],
    keys: ["ip"],
    labels: ["country", "city"],
    measures: { windows: count, count: sum("count", "bigint") },
    coverage: true,
    hoursFromRaw: true,
    view: ["windows", "count"],
  },
  {
    source: getTableName(metricPoints),
    time: "ts",
    scope: ["metric", "series_form"],
    keys: ["oid"],
    labels: ["oname"],
    measures: { points: count, value_sum: sum("value"), value_min: min("value"), value_max: max("value") },
    coverage: false,
    hoursFromRaw: false,
    view: ["points", ["value_avg", `r."value_sum" / NULLIF(r."points", 0)::double precision`], "value_min", "value_max"],
  },
];

export type RollupGrain = "hourly" | "daily";
export const ROLLUP_GRAINS: readonly RollupGrain[] = ["hourly", "daily"];

/** `rollup_stat_transaction_hourly`. */
export function rollupTableName(spec: RollupSpec, grain: RollupGrain): string {
  return `rollup_${spec.source}_${grain}`;
}

/** The table holding each refreshed bucket's coverage, for every rollup that has one. */
export const COVERAGE_TABLE = "rollup_coverage";

/** The hours written since their buckets were last refreshed (marked in ../ledger/windowStatements.ts, cleared by refresh.ts). */
export const MARKS_TABLE = "rollup_marks";

/**
 * The days the previous releases' daily views computed when read; emptied into marks by migration
 * 0017, kept (empty) until no view of an older release can read it.
 */
export const OPEN_DAYS_TABLE = "rollup_open_days";

/** The rollup of a raw table, if it has one. */
export function rollupOf(table: string): RollupSpec | undefined {
  return ROLLUPS.find((r) => r.source === table);
}
