// The reporting views (migrations/0001_views.sql): hourly/daily rollups of the statistics,
// freshness per stream, gaps in the ledger. A view states each column's type: drizzle does not
// know views, and the database test compares the types with the real ones.
import { tableInfo } from "../../db/tables.ts";
import { statDocs } from "./stats.ts";
import type { DeclaredDoc, DocGroup, TypedColumnDoc } from "./types.ts";

const TS = "timestamp with time zone";
const F64 = "double precision";

type Columns = Record<string, TypedColumnDoc>;

// Per statistics type: its key columns and its name columns (max() over the bucket), whose type and
// meaning are the stat table's, and its own sums.
const STAT_VIEWS: Readonly<Record<string, { keys: readonly string[]; names: readonly string[]; measures: Columns }>> = {
  transaction: {
    keys: ["service_hash"],
    names: ["service"],
    measures: {
      sql_count: { type: F64, text: "Sum of sql_count.", unit: "not documented" },
      httpc_count: { type: F64, text: "Sum of httpc_count.", unit: "not documented" },
      apdex: {
        type: F64,
        text: "Apdex weighted by transactions: sum(apdex * count) / sum(count) over the windows that have an apdex.",
        unit: "Apdex score (0 to 1)",
      },
    },
  },
  sql: {
    keys: ["sql_hash", "dbc_hash", "service_hash"],
    names: ["sql", "db", "service"],
    measures: {
      fetch_count: { type: F64, text: "Sum of fetch_count.", unit: "not documented" },
      fetch_time: { type: F64, text: "Sum of fetch_time.", unit: "not documented" },
    },
  },
  httpc: { keys: ["url_hash", "host_hash", "port", "service_hash"], names: ["url", "host", "service"], measures: {} },
  error: { keys: ["class_hash", "msg_hash", "service_hash"], names: ["class", "msg", "service"], measures: {} },
  remote: { keys: ["ip"], names: ["country", "city"], measures: {} },
};

/** A column of stat_<type> as the view passes it on: the table's type and meaning, plus `note`. */
function fromTable(table: string, column: string, note = ""): TypedColumnDoc {
  const text = statDocs.tables?.[table]?.columns[column]?.text ?? "";
  return { type: tableInfo(table).types.get(column) ?? "", text: `${text}${note}` };
}

// count/error/time columns of the transaction, sql and httpc rollups.
const timing: Columns = {
  count: { type: "numeric", text: "Sum of count over the bucket's windows.", unit: "count" },
  error: { type: "numeric", text: "Sum of error over the bucket's windows.", unit: "count" },
  time_sum: { type: F64, text: "Sum of time_sum.", unit: "not documented" },
  time_avg: { type: F64, text: "sum(time_sum) / sum(count): weighted, never an average of averages.", unit: "not documented" },
  time_min: { type: F64, text: "Smallest time_min of the bucket's windows.", unit: "not documented" },
  time_max: { type: F64, text: "Largest time_max of the bucket's windows.", unit: "not documented" },
  error_rate: { type: F64, text: "sum(error) / sum(count); null when count is 0.", unit: "fraction (0 to 1)" },
};

function statView(type: string, grain: "hour" | "day"): DeclaredDoc {
  const { keys, names, measures } = STAT_VIEWS[type]!;
  const counted = type === "transaction" || type === "sql" || type === "httpc";
  const table = `stat_${type}`;
  const pass = (columns: readonly string[], note?: string) => Object.fromEntries(columns.map((c) => [c, fromTable(table, c, note)]));
  return {
    kind: "view",
    description:
      `stat_${type} summed per project, ${grain} (UTC) and key: a window belongs to the ${grain} its start falls in. ` +
      "It shows what the table holds, not how much of the bucket the ledger covers (see sync_windows).",
    columns: {
      pcode: { type: "bigint", text: "Project code." },
      bucket_start: { type: TS, text: `Start of the ${grain}, UTC (date_trunc of window_start).` },
      ...pass(keys),
      ...pass(names, " max() over the bucket (one value per key in practice)."),
      windows: { type: "bigint", text: `Rows of stat_${type} in the bucket: the fetch windows the key appeared in.`, unit: "count" },
      ...(counted ? timing : { count: { type: "numeric", text: "Sum of count over the bucket's windows.", unit: "count" } }),
      ...measures,
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
  description: "What the ledger does not cover: failed windows, and holes between recorded windows before the latest one.",
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
for (const type of Object.keys(STAT_VIEWS)) {
  declared[`stat_${type}_hourly`] = statView(type, "hour");
  declared[`stat_${type}_daily`] = statView(type, "day");
}
declared.stream_freshness = freshness;
declared.ledger_gaps = gaps;

export const viewDocs: DocGroup = { title: "Views", declared };
