// Ground truth: what the server holds for a range, from the same code the server answers with,
// without the record cap and without the clock clamp.
import { fullRecords, isAggregateOp } from "./aggregate.ts";
import type { ServerState } from "./context.ts";
import { heapUse } from "./generate/agents.ts";
import { eventsIn } from "./generate/events.ts";
import { cubesIn } from "./grid.ts";
import { COUNT_FIELD, naturalKey } from "./keys.ts";
import type { GroundTruth, HostPortFilter, JsonRecord } from "./types.ts";
import { burstCubeOf, type ProjectWorld } from "./world.ts";

export function makeTruth(state: ServerState): GroundTruth {
  const worldOf = (pcode: number): ProjectWorld => {
    const w = state.worlds.find((p) => p.pcode === pcode);
    if (!w) throw new Error(`sandbox has no project ${pcode}`);
    return w;
  };

  const records = (pcode: number, opId: string, stime: number, etime: number, filter?: HostPortFilter): JsonRecord[] => {
    const w = worldOf(pcode);
    const cubes = cubesIn(stime, etime);
    if (opId === "range.heap_use.avg" || opId === "range.heap_use.max") return heapUse(w, cubes, opId.endsWith("max") ? "max" : "avg");
    if (!isAggregateOp(opId)) throw new Error(`no ground truth for ${opId}`);
    if (opId === "range.httpc.filtered" && !filter) throw new Error("range.httpc.filtered needs a host/port filter");
    const f =
      filter && (opId === "stat.httpc" || opId === "range.httpc.filtered") ? { host: filter.host, port: String(filter.port) } : undefined;
    return fullRecords(state.cache, w, opId, cubes, f);
  };

  const countsByKey = (pcode: number, opId: string, stime: number, etime: number, filter?: HostPortFilter) => {
    const field = COUNT_FIELD[opId];
    if (!field) throw new Error(`no count field for ${opId}`);
    const out = new Map<string, number>();
    for (const r of records(pcode, opId, stime, etime, filter)) {
      const k = naturalKey(opId, r);
      out.set(k, (out.get(k) ?? 0) + Number(r[field]));
    }
    return out;
  };

  return {
    records,
    total: (pcode, opId, stime, etime, filter) => records(pcode, opId, stime, etime, filter).length,
    countsByKey,
    totalCount: (pcode, opId, stime, etime, filter) => {
      let sum = 0;
      for (const v of countsByKey(pcode, opId, stime, etime, filter).values()) sum += v;
      return sum;
    },
    burstCube: (pcode, time) => {
      const w = worldOf(pcode);
      return w.burstKeys > 0 ? burstCubeOf(w, time) : null;
    },
    events: (pcode, stime, etime, now) => eventsIn(worldOf(pcode), stime, etime, now),
    agents: (pcode) => worldOf(pcode).agents.map((a) => ({ oid: a.oid, oname: a.oname })),
  };
}
