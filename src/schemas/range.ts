// v1 range records (envelope `records` + `total`) and heap use (envelope `data`), spec "Range records"
// and "Heap use result". The records' fields are declared with their columns in
// catalogue/dictionary/range.ts; counts (calls, errors, actives) are never negative (recordCount).
import { z } from "zod";
import { recordOf } from "../kernel/declare.ts";
import { heapUseColumns } from "../catalogue/dictionary/range.ts";
import { objectEnvelope, recordsArray } from "./envelope.ts";
import { count, int, pcode } from "../kernel/primitives.ts";
import { opt } from "../kernel/record.ts";

export const rangeEnvelope = objectEnvelope(z.looseObject({ records: recordsArray, total: count }));

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

export const heapUseRecord = recordOf(heapUseColumns);
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
