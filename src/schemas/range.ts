// v1 range records (envelope `records` + `total`) and heap use (envelope `data`), spec "Range records"
// and "Heap use result". Counts (calls, errors, actives) are never negative (recordCount).
import { z } from "zod";
import { objectEnvelope, recordsArray } from "./envelope.ts";
import { count, epochMs, int, int32, long, num, oidList, pcode, recordCount } from "./primitives.ts";
import { opt, recordSchema } from "./record.ts";

const str = z.string();

export const rangeEnvelope = objectEnvelope(z.looseObject({ records: recordsArray, total: count }));

export const exceptionShape = {
  classHash: int32,
  serviceHash: int32,
  time: epochMs, // a 5-minute bucket
  count: recordCount,
  service: opt(str),
  class: opt(str),
  msg: opt(str),
  oids: opt(oidList), // a string holding a list: "[-1459620666]"
  snapSeq: opt(long), // beyond 2^53: "6068699991557528332"
};
export const exceptionRecord = recordSchema(exceptionShape);

// PascalCase keys, unlike every other operation; Stdev is a string.
export const httpcShape = {
  UrlHash: int32,
  HostHash: int32,
  Url: opt(str),
  Host: opt(str),
  Port: opt(int),
  Total: recordCount,
  Error: opt(recordCount),
  Actived: opt(recordCount), // absent in the filtered form
  Sum: opt(num),
  Avg: opt(num),
  Min: opt(num),
  Max: opt(num),
  Stdev: opt(num),
};
export const httpcRecord = recordSchema(httpcShape);

// Filtered by host and port: adds Service and the mixed-case `Service_hash`.
export const httpcFilteredShape = { ...httpcShape, Service_hash: int32, Service: opt(str) };
export const httpcFilteredRecord = recordSchema(httpcFilteredShape);

export const sqlShape = {
  hash: int32,
  dbcHash: int32,
  sql: opt(str),
  db: opt(str),
  sql_crud: opt(int),
  count_total: recordCount,
  count_error: opt(recordCount),
  count_actived: opt(recordCount),
  time_sum: opt(num),
  time_avg: opt(num),
  time_min: opt(num),
  time_max: opt(num),
  time_std: opt(num), // a string ("240.79")
  fetch_count: opt(num),
  fetch_time: opt(num),
};
export const sqlRecord = recordSchema(sqlShape);

export const remoteShape = { ip: str, count: recordCount, city: opt(str), country: opt(str) };
export const remoteRecord = recordSchema(remoteShape);

export const transactionShape = {
  hash: int32,
  service: opt(str),
  count: recordCount,
  error: opt(recordCount),
  time_sum: opt(num),
  time_avg: opt(num),
  time_max: opt(num),
  sql_count: opt(num),
  sql_time: opt(num),
  sql_fetch: opt(num),
  sql_fetch_time: opt(num),
  httpc_count: opt(num),
  httpc_avg: opt(num),
  cpu_avg: opt(num),
  mem_avg: opt(num),
  // Absent in the old docs' sample.
  apdex: opt(num),
  apdex_satisfied: opt(num),
  apdex_tolerated: opt(num),
};
export const transactionRecord = recordSchema(transactionShape);

export const heapUseEnvelope = objectEnvelope(
  z.looseObject({
    pcode: opt(pcode),
    stime: opt(int),
    etime: opt(int),
    timeMerge: opt(z.string()),
    unit: opt(z.string()),
    data: recordsArray,
  }),
);

export const heapUseShape = { oid: int32, oname: opt(str), heap_use: num /* a decimal string */ };
export const heapUseRecord = recordSchema(heapUseShape);
type HeapUse = z.output<typeof heapUseRecord>;

/**
 * Adds the merge the operation asked for (not the echoed `timeMerge`: the old docs show "avg" under
 * /max) and the echoed unit. Row: oid, oname, heap_use, time_merge, unit, extra.
 */
export function heapUseExplode(merge: "avg" | "max") {
  return (record: HeapUse, envelope: NonNullable<z.output<typeof heapUseEnvelope>>) => [
    {
      oid: record.oid,
      oname: record.oname,
      heap_use: record.heap_use,
      time_merge: merge,
      unit: envelope.unit ?? null,
      extra: record.extra,
    },
  ];
}
