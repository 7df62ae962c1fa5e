// Natural keys of the aggregate records (the warehouse relies on them): within one response the
// records are unique by these fields. Also the count field that ground-truth sums use. Both are
// declared with each aggregate operation (aggregate-ops.ts); heap use is served apart.
import { AGGREGATE_OPS } from "./aggregate-ops.ts";

const ops = Object.entries(AGGREGATE_OPS);

export const NATURAL_KEYS: Readonly<Record<string, readonly string[]>> = {
  ...Object.fromEntries(ops.map(([id, op]) => [id, op.key])),
  "range.heap_use.avg": ["oid"],
  "range.heap_use.max": ["oid"],
};

/** The call-count field of each aggregate record type. */
export const COUNT_FIELD: Readonly<Record<string, string>> = Object.fromEntries(ops.map(([id, op]) => [id, op.count]));

/** `field=value|field=value` of a record's natural key. */
export function naturalKey(opId: string, record: Readonly<Record<string, unknown>>): string {
  const fields = NATURAL_KEYS[opId];
  if (!fields) throw new Error(`no natural key for ${opId}`);
  return fields.map((f) => `${f}=${String(record[f])}`).join("|");
}
