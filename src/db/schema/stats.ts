// v2 aggregated statistics (and tx_caller/tx_domain call statistics): windowed aggregates. The
// columns are declared once, with the records' fields and their meanings, in
// catalogue/dictionary/stats.ts (tx_calls: catalogue/dictionary/series.ts).
import { tableOf } from "../../catalogue/dictionary/declare.ts";
import { txCallColumns } from "../../catalogue/dictionary/series.ts";
import {
  statErrorColumns,
  statHttpcColumns,
  statRemoteColumns,
  statSqlColumns,
  statTransactionColumns,
} from "../../catalogue/dictionary/stats.ts";
import { windowedTable } from "./columns.ts";

export const statTransaction = windowedTable("stat_transaction", tableOf(statTransactionColumns), ["service_hash"]);
export const statSql = windowedTable("stat_sql", tableOf(statSqlColumns), ["sql_hash", "dbc_hash", "service_hash"]);
export const statHttpc = windowedTable("stat_httpc", tableOf(statHttpcColumns), ["url_hash", "host_hash", "port", "service_hash"]);
export const statError = windowedTable("stat_error", tableOf(statErrorColumns), ["class_hash", "msg_hash", "service_hash"]);
export const statRemote = windowedTable("stat_remote", tableOf(statRemoteColumns), ["ip"]);

/** tx_caller / tx_domain filtered call statistics: response shape undocumented, kept whole. */
export const txCalls = windowedTable("tx_calls", tableOf(txCallColumns), ["metric_type", "filter_key", "filter_value"]);
