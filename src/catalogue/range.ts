// v1 range records and heap use: path parameters stime/etime (spec "Range operations").
import { anyJson, anyRecord } from "../schemas/placeholder.ts";
import { DAY, defineOperation, HOUR } from "./types.ts";

// Parameter table: account token; sample request: project token (spec "Note on tokens").
const common = {
  area: "range",
  method: "GET",
  token: "account",
  altToken: "project",
  sendsPcode: true,
  format: "json",
  inSpec: true,
} as const;

function rangeRecords(name: string, table: string, extraPath = "", summary = `${name} records`) {
  return defineOperation({
    ...common,
    id: `range.${name}${extraPath ? ".filtered" : ""}`,
    summary,
    path: `/open/api/json/${name}/{stime}/{etime}${extraPath}`,
    // v1 range records: at most one day (API-NOTES.md "Limits not in the spec").
    windowLimitMs: DAY,
    envelope: anyJson,
    records: { at: "records", schema: anyRecord },
    stream: { kind: "aggregate", table, enabledByDefault: extraPath === "" },
  });
}

function heapUse(merge: "avg" | "max") {
  return defineOperation({
    ...common,
    id: `range.heap_use.${merge}`,
    summary: `heap use per agent, ${merge}`,
    path: `/open/api/json/heap_use/{stime}/{etime}/${merge}`,
    windowLimitMs: HOUR,
    envelope: anyJson,
    records: { at: "data", schema: anyRecord },
    stream: { kind: "aggregate", table: "heap_use", enabledByDefault: true },
  });
}

export const rangeOperations = [
  rangeRecords("exception", "range_exceptions"),
  rangeRecords("httpc", "range_httpc"),
  rangeRecords("httpc", "range_httpc_by_service", "/filter/host/{host}/port/{port}", "httpc records of one host and port, per service"),
  rangeRecords("sql", "range_sql"),
  rangeRecords("remote", "range_remote"),
  rangeRecords("transaction", "range_transactions"),
  heapUse("avg"),
  heapUse("max"),
] as const;
