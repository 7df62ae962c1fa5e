// v1 range records and heap use: windowed aggregates, replaced per window on re-fetch.
import { bigint, integer, text } from "drizzle-orm/pg-core";
import { f64, i64, ts, windowedTable } from "./columns.ts";

export const rangeExceptions = windowedTable(
  "range_exceptions",
  {
    time: ts(),
    class_hash: i64(),
    class: text(),
    service_hash: i64(),
    service: text(),
    count: i64(),
    msg: text(),
    // "[-1459620666]": a string holding a list; the mapper parses it.
    oids: i64().array(),
    // Beyond 2^53 ("6068699991557528332"): read as bigint, never as a JS number.
    snap_seq: bigint({ mode: "bigint" }),
  },
  ["time", "class_hash", "service_hash"],
);

// PascalCase keys (Sum, Url, HostHash, Service_hash) become snake_case columns.
const httpcColumns = () => ({
  url_hash: i64(),
  url: text(),
  host_hash: i64(),
  host: text(),
  port: integer(),
  total: i64(),
  error: i64(),
  actived: i64(),
  sum: f64(),
  avg: f64(),
  min: f64(),
  max: f64(),
  // Stdev arrives as a string.
  stdev: f64(),
});

export const rangeHttpc = windowedTable("range_httpc", httpcColumns(), ["url_hash", "host_hash", "port"]);

/**
 * httpc filtered by host and port: one stream partition per (host, port). filter_host/filter_port
 * hold the filter as requested, so replacing one filter's window leaves the others alone.
 */
export const rangeHttpcByService = windowedTable(
  "range_httpc_by_service",
  {
    filter_host: text().notNull().default(""),
    filter_port: text().notNull().default(""),
    ...httpcColumns(),
    service_hash: i64(),
    service: text(),
  },
  ["url_hash", "host_hash", "port", "service_hash"],
);

export const rangeSql = windowedTable(
  "range_sql",
  {
    hash: i64(),
    dbc_hash: i64(),
    db: text(),
    sql: text(),
    sql_crud: integer(),
    count_total: i64(),
    count_error: i64(),
    count_actived: i64(),
    time_sum: f64(),
    time_avg: f64(),
    time_min: f64(),
    time_max: f64(),
    // time_std arrives as a string.
    time_std: f64(),
    fetch_count: f64(),
    fetch_time: f64(),
  },
  ["hash", "dbc_hash"],
);

export const rangeRemote = windowedTable("range_remote", { ip: text(), country: text(), city: text(), count: i64() }, ["ip"]);

export const rangeTransactions = windowedTable(
  "range_transactions",
  {
    hash: i64(),
    service: text(),
    count: i64(),
    error: i64(),
    time_sum: f64(),
    time_avg: f64(),
    time_max: f64(),
    sql_count: f64(),
    sql_time: f64(),
    sql_fetch: f64(),
    sql_fetch_time: f64(),
    httpc_count: f64(),
    httpc_avg: f64(),
    cpu_avg: f64(),
    mem_avg: f64(),
    apdex: f64(),
    apdex_satisfied: f64(),
    apdex_tolerated: f64(),
  },
  ["hash"],
);

/** Heap use per agent: both streams (avg, max) share the table, told apart by time_merge. */
export const heapUse = windowedTable(
  "heap_use",
  {
    time_merge: text().notNull(),
    oid: i64(),
    oname: text(),
    // A string holding a decimal number ("36121554.72").
    heap_use: f64(),
    unit: text(),
  },
  ["time_merge", "oid"],
);
