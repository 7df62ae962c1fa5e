// The reporting views (defined once in src/db/views.ts, created by migrate): hourly/daily statistics and metric points,
// freshness per stream, gaps in the ledger. A view states each column's type: drizzle does not
// know views, and the database test compares the types with the real ones.

import { getTableName } from "drizzle-orm";
import { metricPoints, seriesDocs } from "../catalogue/series.ts";
import { statDocs } from "../catalogue/stats.ts";
import { MARKS_TABLE, ROLLUPS, type RollupSpec, rollupOf, rollupTableName } from "../db/rollups/spec.ts";
import { tableInfo } from "../db/tables.ts";
import type { DeclaredDoc, DocGroup, TypedColumnDoc } from "../kernel/docs.ts";

const TS = "timestamp with time zone";
const F64 = "double precision";

type Columns = Record<string, TypedColumnDoc>;

// Per statistics type, the measures only its view shows (the keys and names come from its rollup).
const STAT_MEASURES: Readonly<Record<string, Columns>> = {
  transaction: {
    sql_count: { type: F64, text: "Sum of sql_count.", unit: "not documented" },
    httpc_count: { type: F64, text: "Sum of httpc_count.", unit: "not documented" },
    apdex: {
      type: F64,
      text: "Apdex weighted by transactions: sum(apdex * count) / sum(count) over the windows that have an apdex.",
      unit: "Apdex score (0 to 1)",
    },
  },
  sql: {
    fetch_count: { type: F64, text: "Sum of fetch_count.", unit: "not documented" },
    fetch_time: { type: F64, text: "Sum of fetch_time.", unit: "not documented" },
  },
  httpc: {},
  error: {},
  remote: {},
};

/** A column of a raw table as a view passes it on: the table's type and meaning, plus `note`. */
function fromTable(table: string, column: string, note = ""): TypedColumnDoc {
  const doc = statDocs.tables?.[table]?.columns[column] ?? seriesDocs.tables?.[table]?.columns[column];
  return { type: tableInfo(table).types.get(column) ?? "", text: `${doc?.text ?? ""}${note}` };
}

const count = (text: string): TypedColumnDoc => ({ type: "bigint", text, unit: "count" });

// count/error/time columns of the transaction, sql and httpc rollups.
const timing: Columns = {
  count: count("Sum of count over the bucket's windows."),
  error: count("Sum of error over the bucket's windows."),
  time_sum: { type: F64, text: "Sum of time_sum.", unit: "not documented" },
  time_avg: { type: F64, text: "sum(time_sum) / sum(count): weighted, never an average of averages.", unit: "not documented" },
  time_min: { type: F64, text: "Smallest time_min of the bucket's windows.", unit: "not documented" },
  time_max: { type: F64, text: "Largest time_max of the bucket's windows.", unit: "not documented" },
  error_rate: { type: F64, text: "sum(error) / sum(count); null when count is 0.", unit: "fraction (0 to 1)" },
};

const coverage: TypedColumnDoc = {
  type: F64,
  text: "Share of the bucket the ledger covers (done or truncated windows): 1 for a fully fetched bucket; less for the current hour, a backfill under way, a failed window.",
  unit: "fraction (0 to 1)",
};

const GRAIN = { hour: "hourly", day: "daily" } as const;

/** Where a statistics view reads its buckets (src/db/rollups/views.ts). */
const STAT_SOURCE = {
  hour: (spec: RollupSpec) =>
    `read from the rows of ${spec.source} of whole hours (a window of an hour or more starting on the hour) and from ` +
    `${rollupTableName(spec, "hourly")} (split windows' leaves; hours whose raw months prune dropped); an hour written ` +
    `since the last refresh (${MARKS_TABLE}) from the rows of ${spec.source}`,
  day: (spec: RollupSpec) =>
    `read from its rollup ${rollupTableName(spec, "daily")} (kept by the refresher), and for a day written since the ` +
    `last refresh (${MARKS_TABLE}) from the rows of ${spec.source}`,
};

function bucketColumns(spec: RollupSpec, grain: "hour" | "day"): Columns {
  const pass = (columns: readonly string[], note?: string) => Object.fromEntries(columns.map((c) => [c, fromTable(spec.source, c, note)]));
  return {
    pcode: { type: "bigint", text: "Project code." },
    ...pass(spec.scope),
    bucket_start: { type: TS, text: `Start of the ${grain} (UTC): filter on it (it prunes the partitions read and uses their key).` },
    ...pass(spec.keys),
    ...pass(spec.labels, " max() over the bucket (one value per key in practice)."),
  };
}

function statView(type: string, grain: "hour" | "day"): DeclaredDoc {
  const spec = ROLLUPS.find((r) => r.source === `stat_${type}`)!;
  const counted = type === "transaction" || type === "sql" || type === "httpc";
  return {
    kind: "view",
    description:
      `stat_${type} summed per project, ${grain} (UTC) and key, ${STAT_SOURCE[grain](spec)}: a window belongs to the ` +
      `${grain} its start falls in; coverage says how much of the bucket is fetched.`,
    columns: {
      ...bucketColumns(spec, grain),
      windows: count(`Rows of stat_${type} in the bucket: the fetch windows the key appeared in.`),
      ...(counted ? timing : { count: count("Sum of count over the bucket's windows.") }),
      ...STAT_MEASURES[type],
      coverage,
    },
  };
}

function pointsView(grain: "hour" | "day"): DeclaredDoc {
  const points = getTableName(metricPoints);
  const spec = rollupOf(points)!;
  const unit = `the metric's (see ${points}.value)`;
  return {
    kind: "view",
    description: `${points} per project, metric, form, agent and ${grain} (UTC), read from its rollup ${rollupTableName(spec, GRAIN[grain])} (kept by the refresher; a bucket written since the last refresh from ${points}).`,
    columns: {
      ...bucketColumns(spec, grain),
      points: count("Points of the series in the bucket."),
      value_avg: { type: F64, text: "Mean of the bucket's point values (sum / points).", unit },
      value_min: { type: F64, text: "Smallest point value of the bucket.", unit },
      value_max: { type: F64, text: "Largest point value of the bucket.", unit },
    },
  };
}

const freshness: DeclaredDoc = {
  kind: "view",
  description:
    "Per stream and project: how far the data reaches and what went wrong (a stream with partitions is as fresh as its least advanced one).",
  columns: {
    stream: { type: "text", text: "Stream id (catalogue operation)." },
    pcode: { type: "bigint", text: "Project code; 0 for account-level streams." },
    watermark: { type: TS, text: "Smallest watermark of the stream's partitions: everything before it is fetched." },
    lag: { type: "interval", text: "now() - watermark." },
    watermark_updated_at: { type: TS, text: "When a watermark of the stream last moved." },
    last_window_end: { type: TS, text: "Latest end of a done or truncated window in the ledger." },
    last_finished_at: { type: TS, text: "When the ledger last recorded a window of the stream." },
    done_windows: { type: "bigint", text: "Ledger windows done.", unit: "count" },
    failed_windows: { type: "bigint", text: "Ledger windows failed (retried by the next run).", unit: "count" },
    truncated_windows: { type: "bigint", text: "Ledger windows truncated by the record cap.", unit: "count" },
    quarantined_records: { type: "bigint", text: "Records quarantined in the stream's windows.", unit: "count" },
  },
};

const gaps: DeclaredDoc = {
  kind: "view",
  description:
    "What the ledger does not cover: failed windows, and holes of windowed streams (time no window covers between a stream's first and last window; the next sync fetches them). A snapshot's captures cover no time: the time between two is no hole.",
  columns: {
    stream: { type: "text", text: "Stream id (catalogue operation)." },
    pcode: { type: "bigint", text: "Project code; 0 for account-level streams." },
    partition: { type: "text", text: "Partition of the stream ('' unless it has several)." },
    gap_start: { type: TS, text: "Start of the hole or failed window." },
    gap_end: { type: TS, text: "End (exclusive) of the hole or failed window." },
    kind: { type: "text", text: "hole (no window covers the time) or failed (a failed window)." },
    error: { type: "text", text: "Why the window failed; null for holes." },
  },
};

const declared: Record<string, DeclaredDoc> = {};
for (const type of Object.keys(STAT_MEASURES)) {
  declared[`stat_${type}_hourly`] = statView(type, "hour");
  declared[`stat_${type}_daily`] = statView(type, "day");
}
declared.metric_points_hourly = pointsView("hour");
declared.metric_points_daily = pointsView("day");
declared.stream_freshness = freshness;
declared.ledger_gaps = gaps;

export const viewDocs: DocGroup = { title: "Views", declared };
