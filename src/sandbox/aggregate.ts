// Window aggregation like the real server: a window's records are merges of the 5-minute cubes
// whose start lies in [stime, etime), grouped by the record's key, sorted descending by a column.
// The server and the ground truth both call fullRecords; only the server applies the cap.
import { AGGREGATE_OPS } from "./aggregate-ops.ts";
import { type Fact, type FactCache, mergeInto } from "./generate/facts.ts";
import { naturalKey } from "./keys.ts";
import { hostOf } from "./payloads/names.ts";
import type { JsonRecord } from "./payloads/stat-records.ts";
import type { ProjectWorld } from "./world.ts";

/** host + port filter (stat.httpc body `filter`, range.httpc.filtered path). */
export interface HostFilter {
  readonly host: string;
  readonly port: string;
}

export function isAggregateOp(opId: string): boolean {
  return opId in AGGREGATE_OPS;
}

function matchesHost(f: Fact, filter: HostFilter): boolean {
  const h = hostOf(f.host!);
  return h.name === filter.host && String(h.port) === filter.port;
}

/**
 * Every record of `opId` over `cubes`, sorted by `order` (default per op) descending, ties by
 * natural key. `order` must name a numeric field of the records (checked by the caller).
 */
export function fullRecords(
  cache: FactCache,
  w: ProjectWorld,
  opId: string,
  cubes: readonly number[],
  filter?: HostFilter,
  order?: string,
): JsonRecord[] {
  const op = AGGREGATE_OPS[opId];
  if (!op) throw new Error(`not an aggregate operation: ${opId}`);
  const groups = new Map<string, Fact>();
  for (const cube of cubes) {
    for (const f of cache.facts(op.type, w, cube)) {
      if (filter && !matchesHost(f, filter)) continue;
      const key = op.group(f, cube);
      const acc = groups.get(key);
      if (acc) mergeInto(op.type, acc, f);
      else groups.set(key, { ...f });
    }
  }
  const column = order ?? op.order;
  const rows = [...groups.values()].map((f) => {
    const record = op.print(w, f);
    return { record, value: Number(record[column]), key: naturalKey(opId, record) };
  });
  rows.sort((a, b) => b.value - a.value || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  return rows.map((r) => r.record);
}

/** Whether `column` can sort records of `opId`: a numeric field of its records. */
export function isSortColumn(w: ProjectWorld, opId: string, column: string): boolean {
  const op = AGGREGATE_OPS[opId];
  if (!op) return false;
  // Every field reads 0: key index 0 exists in every name table, measures print as numbers.
  const probe: Fact = new Proxy({}, { get: () => 0 });
  return typeof op.print(w, probe)[column] === "number";
}
