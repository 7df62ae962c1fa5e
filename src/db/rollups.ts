// Hourly and daily rollups kept by the sync (docs/design.md "Rollups kept by the sync"; TimescaleDB's
// continuous aggregates are the model): each is declared once here, and its tables, the SQL that
// recomputes a bucket (db/refreshRollups.ts) and the views over it all come from the declaration.
// The statistics' raw rows are hourly already: their hourly rollup is read from them (the table holds
// only the hours whose raw months prune dropped); finer raw rows (metric points) are summed into the
// hourly table. A window's write recomputes exactly the buckets it touches, in its own transaction.

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

export interface RollupSpec {
  /** The raw table, e.g. `stat_transaction`. */
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
   * holds only the other hours (split leaves' hours, summed by the sync; hours whose raw months
   * `prune` dropped); days are computed from the raw rows. Otherwise (finer rows) the hourly table
   * is kept by the sync and days are computed from it.
   */
  readonly hoursFromRaw: boolean;
}

const count: RollupMeasure = { agg: "count", type: "bigint" };
const sum = (of: string, type: RollupMeasure["type"] = "double precision"): RollupMeasure => ({ agg: "sum", of, type });
const min = (of: string): RollupMeasure => ({ agg: "min", of, type: "double precision" });
const max = (of: string): RollupMeasure => ({ agg: "max", of, type: "double precision" });

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
    source: "stat_transaction",
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
  },
  {
    source: "stat_sql",
    time: "window_start",
    scope: [],
    keys: ["sql_hash", "dbc_hash", "service_hash"],
    labels: ["sql", "db", "service"],
    measures: { ...timing, fetch_count: sum("fetch_count"), fetch_time: sum("fetch_time") },
    coverage: true,
    hoursFromRaw: true,
  },
  {
    source: "stat_httpc",
    time: "window_start",
    scope: [],
    keys: ["url_hash", "host_hash", "port", "service_hash"],
    labels: ["url", "host", "service"],
    measures: timing,
    coverage: true,
    hoursFromRaw: true,
  },
  {
    source: "stat_error",
    time: "window_start",
    scope: [],
    keys: ["class_hash", "msg_hash", "service_hash"],
    labels: ["class", "msg", "service"],
    measures: { windows: count, count: sum("count", "bigint") },
    coverage: true,
    hoursFromRaw: true,
  },
  {
    source: "stat_remote",
    time: "window_start",
    scope: [],
    keys: ["ip"],
    labels: ["country", "city"],
    measures: { windows: count, count: sum("count", "bigint") },
    coverage: true,
    hoursFromRaw: true,
  },
  {
    source: "metric_points",
    time: "ts",
    scope: ["metric", "series_form"],
    keys: ["oid"],
    labels: ["oname"],
    measures: { points: count, value_sum: sum("value"), value_min: min("value"), value_max: max("value") },
    coverage: false,
    hoursFromRaw: false,
  },
];

export type RollupGrain = "hourly" | "daily";
export const ROLLUP_GRAINS: readonly RollupGrain[] = ["hourly", "daily"];

/** `rollup_stat_transaction_hourly`. */
export function rollupTableName(spec: RollupSpec, grain: RollupGrain): string {
  return `rollup_${spec.source}_${grain}`;
}

/** The table holding each bucket's coverage, for every rollup that has one (rollupSql.ts). */
export const COVERAGE_TABLE = "rollup_coverage";

/** The days of a rollup with a coverage that its daily views compute when read (rollupSql.ts dailyRows). */
export const OPEN_DAYS_TABLE = "rollup_open_days";

/** The rollup of a raw table, if it has one. */
export function rollupOf(table: string): RollupSpec | undefined {
  return ROLLUPS.find((r) => r.source === table);
}

/** Whether a raw table's rollup has open days (a coverage): the daily views compute them until closed. */
export function keepsOpenDays(table: string): boolean {
  return rollupOf(table)?.coverage === true;
}
