// v1 range records and heap use: path parameters stime/etime (spec "Range operations").
import { heapUseEnvelope, heapUseExplode, heapUseRecord, rangeEnvelope } from "../schemas/range.ts";
import { type Declaration, recordOf } from "../kernel/declare.ts";
import { exceptionColumns, httpcColumns, httpcFilteredColumns, remoteColumns, sqlColumns, transactionColumns } from "./dictionary/range.ts";
import { DAY, defineOperation, HOUR } from "./types.ts";

// Parameter table: account token; sample request and the hosted service's client: project token
// (spec "Note on tokens"). The project token goes first, the account token on refusal (api/auth.ts).
const common = {
  area: "range",
  method: "GET",
  token: "project",
  altToken: "account",
  sendsPcode: true,
  format: "json",
  inSpec: true,
} as const;

// The column that counts calls (or hits) in each table: a restatement sums it before and after.
const MEASURE: Readonly<Record<string, string>> = {
  range_exceptions: "count",
  range_httpc: "total",
  range_httpc_by_service: "total",
  range_sql: "count_total",
  range_remote: "count",
  range_transactions: "count",
};

function rangeRecords(name: string, table: string, columns: Declaration, extraPath = "", summary = `${name} records`) {
  return defineOperation({
    ...common,
    id: `range.${name}${extraPath ? ".filtered" : ""}`,
    summary,
    path: `/open/api/json/${name}/{stime}/{etime}${extraPath}`,
    // v1 range records: at most one day (docs/api-notes.md "Limits").
    windowLimitMs: DAY,
    envelope: rangeEnvelope,
    records: { at: "records", schema: recordOf(columns) },
    stream: {
      kind: "aggregate",
      table,
      enabledByDefault: extraPath === "",
      truncation: "total",
      measure: MEASURE[table]!,
      // One partition per configured host/port filter (`inputs`), kept apart by these columns.
      ...(extraPath ? { paramColumns: { host: "filter_host", port: "filter_port" } } : {}),
    },
  });
}

function heapUse(merge: "avg" | "max") {
  return defineOperation({
    ...common,
    id: `range.heap_use.${merge}`,
    summary: `heap use per agent, ${merge}`,
    path: `/open/api/json/heap_use/{stime}/{etime}/${merge}`,
    windowLimitMs: HOUR,
    envelope: heapUseEnvelope,
    records: { at: "data", schema: heapUseRecord, explode: heapUseExplode(merge) },
    // avg and max share the table: the constant time_merge keeps their windows apart. A gauge, no
    // measure: heap sizes do not add up.
    stream: { kind: "aggregate", table: "heap_use", enabledByDefault: true, constants: { time_merge: merge } },
  });
}

export const rangeOperations = [
  rangeRecords("exception", "range_exceptions", exceptionColumns),
  rangeRecords("httpc", "range_httpc", httpcColumns),
  rangeRecords(
    "httpc",
    "range_httpc_by_service",
    httpcFilteredColumns,
    "/filter/host/{host}/port/{port}",
    "httpc records of one host and port, per service",
  ),
  rangeRecords("sql", "range_sql", sqlColumns),
  rangeRecords("remote", "range_remote", remoteColumns),
  rangeRecords("transaction", "range_transactions", transactionColumns),
  heapUse("avg"),
  heapUse("max"),
] as const;
