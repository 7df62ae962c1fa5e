// v2 aggregated statistics (and tx_caller/tx_domain call statistics): windowed aggregates.
import { integer, jsonb, text } from "drizzle-orm/pg-core";
import { tableOf } from "../../catalogue/dictionary/declare.ts";
import { txCallColumns } from "../../catalogue/dictionary/series.ts";
import { f64, i64, ts, windowedTable } from "./columns.ts";

const timing = () => ({
  count: i64(),
  error: i64(),
  time_sum: f64(),
  time_avg: f64(),
  time_min: f64(),
  time_max: f64(),
  time_stdev: f64(),
});

export const statTransaction = windowedTable(
  "stat_transaction",
  {
    service_hash: i64(),
    service: text(),
    ...timing(),
    sql_count: f64(),
    sql_count_avg: f64(),
    sql_time: f64(),
    sql_time_avg: f64(),
    tx_sql_time_avg: f64(),
    sql_fetch: f64(),
    sql_fetch_avg: f64(),
    sql_fetch_time: f64(),
    sql_fetch_time_avg: f64(),
    tx_sql_fetch_time_avg: f64(),
    httpc_count: f64(),
    httpc_count_avg: f64(),
    httpc_time: f64(),
    httpc_time_avg: f64(),
    tx_httpc_time_avg: f64(),
    mem_avg: f64(),
    cpu_avg: f64(),
    apdex_satisfied: f64(),
    apdex_tolerated: f64(),
    apdex: f64(),
  },
  ["service_hash"],
);

export const statSql = windowedTable(
  "stat_sql",
  {
    sql_hash: i64(),
    sql: text(),
    dbc_hash: i64(),
    db: text(),
    service_hash: i64(),
    service: text(),
    ...timing(),
    fetch_count: f64(),
    fetch_count_avg: f64(),
    fetch_time: f64(),
    fetch_time_avg: f64(),
    crud_metrics: text(),
  },
  ["sql_hash", "dbc_hash", "service_hash"],
);

export const statHttpc = windowedTable(
  "stat_httpc",
  {
    url_hash: i64(),
    url: text(),
    host_hash: i64(),
    host: text(),
    port: integer(),
    service_hash: i64(),
    service: text(),
    ...timing(),
  },
  ["url_hash", "host_hash", "port", "service_hash"],
);

export const statError = windowedTable(
  "stat_error",
  {
    class_hash: i64(),
    class: text(),
    msg_hash: i64(),
    msg: text(),
    service_hash: i64(),
    service: text(),
    error_snap_id: text(),
    count: i64(),
    time: ts(),
    oids: i64().array(),
    onames: text().array(),
    // Lists of undocumented element type: JSON.
    okinds: jsonb(),
    okind_names: jsonb(),
    onodes: jsonb(),
    onode_names: jsonb(),
  },
  ["class_hash", "msg_hash", "service_hash"],
);

export const statRemote = windowedTable("stat_remote", { ip: text(), country: text(), city: text(), count: i64() }, ["ip"]);

/** tx_caller / tx_domain filtered call statistics: response shape undocumented, kept whole (columns: catalogue/dictionary/series.ts). */
export const txCalls = windowedTable("tx_calls", tableOf(txCallColumns), ["metric_type", "filter_key", "filter_value"]);
