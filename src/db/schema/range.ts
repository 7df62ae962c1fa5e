// v1 range records and heap use: windowed aggregates, replaced per window on re-fetch. The columns
// are declared once, with the records' fields and their meanings, in catalogue/dictionary/range.ts.
import { tableOf } from "../../catalogue/dictionary/declare.ts";
import {
  exceptionColumns,
  heapUseColumns,
  httpcColumns,
  httpcFilteredColumns,
  remoteColumns,
  sqlColumns,
  transactionColumns,
} from "../../catalogue/dictionary/range.ts";
import { windowedTable } from "./columns.ts";

export const rangeExceptions = windowedTable("range_exceptions", tableOf(exceptionColumns), ["time", "class_hash", "service_hash"]);
export const rangeHttpc = windowedTable("range_httpc", tableOf(httpcColumns), ["url_hash", "host_hash", "port"]);
/** One stream partition per (host, port) filter: replacing one filter's window leaves the others alone. */
export const rangeHttpcByService = windowedTable("range_httpc_by_service", tableOf(httpcFilteredColumns), [
  "url_hash",
  "host_hash",
  "port",
  "service_hash",
]);
export const rangeSql = windowedTable("range_sql", tableOf(sqlColumns), ["hash", "dbc_hash"]);
export const rangeRemote = windowedTable("range_remote", tableOf(remoteColumns), ["ip"]);
export const rangeTransactions = windowedTable("range_transactions", tableOf(transactionColumns), ["hash"]);
/** Heap use per agent: both streams (avg, max) share the table, told apart by time_merge. */
export const heapUse = windowedTable("heap_use", tableOf(heapUseColumns), ["time_merge", "oid"]);
