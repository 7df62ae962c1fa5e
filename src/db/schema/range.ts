// v1 range records and heap use: windowed aggregates, replaced per window on re-fetch. The columns
// are declared once, with the records' fields and their meanings, in catalogue/dictionary/range.ts.
import {
  exceptionColumns,
  heapUseColumns,
  httpcColumns,
  httpcFilteredColumns,
  remoteColumns,
  sqlColumns,
  transactionColumns,
} from "../../catalogue/dictionary/range.ts";
import { windowedTable } from "../../kernel/tables.ts";

export const rangeExceptions = windowedTable("range_exceptions", exceptionColumns);
export const rangeHttpc = windowedTable("range_httpc", httpcColumns);
/** One stream partition per (host, port) filter: replacing one filter's window leaves the others alone. */
export const rangeHttpcByService = windowedTable("range_httpc_by_service", httpcFilteredColumns);
export const rangeSql = windowedTable("range_sql", sqlColumns);
export const rangeRemote = windowedTable("range_remote", remoteColumns);
export const rangeTransactions = windowedTable("range_transactions", transactionColumns);
/** Heap use per agent: both streams (avg, max) share the table, told apart by time_merge. */
export const heapUse = windowedTable("heap_use", heapUseColumns);
