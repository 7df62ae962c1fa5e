// Operations the hosted service documents but our spec does not (docs/api-notes.md):
// loose but meaningful schemas, so that every docs sample is checked against something real.
import { z } from "zod";
import { bool, epochMs, int, int32, long, lower, num, pcode } from "../kernel/primitives.ts";
import { opt, recordSchema } from "../kernel/record.ts";
import { bareArray, objectEnvelope, recordsArray } from "./envelope.ts";
import { serverRecord } from "./project.ts";

const str = z.string();
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** /open/api/tag/db_pool_detail/dbconn: connection pools per agent at one time. */
export const dbPoolEnvelope = objectEnvelope(z.looseObject({ pcode: opt(pcode), time: opt(epochMs), dbc_total: recordsArray }));
export const dbPoolRecord = recordSchema({ oid: int32, oname: opt(str), databaseUrl: opt(str), active: int, idle: int, total: int });

/** /open/json/act_agent|host|cpucore|inact_agent: {pname, values: "57.0"}, one record. */
export const serverCountEnvelope = objectEnvelope(recordSchema({ pname: opt(str), values: num }));

const serverProduct = { pcode: opt(pcode), pname: opt(str), timezone: opt(num), regionName: opt(str), language: opt(str) };

// infra_*: `values` is a map keyed by server NAME (no oid); it becomes `rows`, one per server.
function infraEnvelope(toRow: (oname: string, value: unknown) => Record<string, unknown>) {
  return objectEnvelope(
    z
      .looseObject({ ...serverProduct, values: z.record(z.string(), z.unknown()) })
      .transform((e) => ({ ...e, rows: Object.entries(e.values).map(([oname, value]) => toRow(oname, value)) })),
  );
}
export const infraValueEnvelope = infraEnvelope((oname, value) => ({ oname, value }));
export const infraObjectEnvelope = infraEnvelope((oname, value) => (isObject(value) ? { oname, ...value } : { oname, value }));
export const infraProcEnvelope = infraEnvelope((oname, processes) => ({ oname, processes }));

export const infraCpuRecord = recordSchema({ oname: str, value: num });
export const infraTrafficRecord = recordSchema({ oname: str, value: num });
export const infraDiskRecord = recordSchema({ oname: str, bps: opt(num), iops: opt(num) });
const processRecord = recordSchema({ cmd1: opt(str), cpu: opt(num), memoryBytes: opt(num), bps: opt(num) });
export const infraProcRecord = recordSchema({ oname: str, processes: z.array(processRecord) });
/** One row per process: oname, cmd1, cpu, memory_bytes, bps, extra. */
export function infraProcExplode(server: z.output<typeof infraProcRecord>) {
  return server.processes.map((p) => ({ oname: server.oname, ...p }));
}

// /open/json/sm: servers plus max/count summaries; max.disk.totalSpace is ~Long.MAX (beyond 2^53).
const bigCounters = z.looseObject({ totalSpace: opt(long), usedSpace: opt(long), freeSpace: opt(long), freespace: opt(long) });
export const smEnvelope = objectEnvelope(
  z
    .looseObject({
      pname: opt(str),
      values: z.looseObject({
        servers: recordsArray,
        max: opt(z.looseObject({ disk: opt(bigCounters), nic: opt(z.record(z.string(), num)) })),
        count: opt(z.record(z.string(), int)),
        tags: opt(z.record(z.string(), z.unknown())),
      }),
    })
    .transform((e) => ({ ...e, servers: e.values.servers })),
);
export { serverRecord };

export const smServersEnvelope = objectEnvelope(z.looseObject({ ...serverProduct, values: recordsArray }));
// Dotted keys 'os.status', 'os.name' -> os_status, os_name.
export const smServerRecord = recordSchema({
  oid: int32,
  oname: opt(str),
  "os.status": opt(lower),
  "os.name": opt(str),
  isActive: opt(bool),
});

export const smStatEnvelope = objectEnvelope(z.looseObject({ servers: recordsArray }));
const smStatPoint = recordSchema({
  time: epochMs,
  cpu: opt(num),
  memory_pused: opt(num),
  memory_swappused: opt(num),
  usedPercent: opt(num),
  ioPercent: opt(num),
  trafficIn: opt(num),
  trafficOut: opt(num),
});
export const smStatRecord = recordSchema({ oid: int32, timeData: z.array(smStatPoint) });
/** One row per server and time: oid, time, cpu, memory_pused, ..., extra. */
export function smStatExplode(server: z.output<typeof smStatRecord>) {
  return server.time_data.map((p) => ({ oid: server.oid, ...p }));
}

// database_params: three lists of {key, value}; flattened to rows tagged with their list.
const param = z.looseObject({ key: str, value: z.unknown() });
export const dbParamsEnvelope = objectEnvelope(
  z
    .looseObject({ unmatchedKeys: opt(z.array(param)), baseTime: opt(z.array(param)), comparisonTime: opt(z.array(param)) })
    .transform((e) => ({
      ...e,
      params: (["baseTime", "comparisonTime", "unmatchedKeys"] as const).flatMap((side) => (e[side] ?? []).map((p) => ({ side, ...p }))),
    })),
);
export const dbParamRecord = recordSchema({ side: str, key: str, value: z.unknown() });

export const dbSqlStatsEnvelope = objectEnvelope(
  z.looseObject({
    records: recordsArray,
    topN: opt(int),
    total: opt(int),
    retrievedStartTime: opt(epochMs),
    retrievedEndTime: opt(epochMs),
  }),
);
export const dbSqlStatRecord = recordSchema({
  sqlHash: int32,
  sql: opt(str),
  user: opt(str),
  onames: opt(str), // a comma-joined string
  sql_execute_cnt: opt(num),
  sql_elapse: opt(num),
  sql_elapse_max: opt(num),
});

// MXQL: a bare array of rows whose columns depend on the query; the usual identity columns are
// typed, everything else is kept in `extra`.
export const mxqlEnvelope = bareArray;
export const mxqlRow = recordSchema({ time: opt(epochMs), pcode: opt(pcode), oid: opt(int32), oname: opt(str) });
export const mxqlRequest = z.strictObject({
  stime: z.number().int().nonnegative(),
  etime: z.number().int().nonnegative(),
  mql: str.min(1),
  limit: z.number().int().positive().optional(),
  pageKey: str.optional(),
  inject: z.record(z.string(), str).optional(),
  param: z.record(z.string(), z.union([str, z.number()])).optional(),
});

// yard/flush: only a schema is documented ({elapsed, count, url}); array or object not stated.
export const yardFlushEnvelope = objectEnvelope(z.preprocess((v) => (isObject(v) ? [v] : v), recordsArray));
export const yardFlushRecord = recordSchema({ url: str, count: num, elapsed: num });
export const yardFlushRequest = z.strictObject({
  type: str,
  path: str.startsWith("/"),
  pcode: z.union([str.regex(/^\d+$/), z.number().int()]), // a STRING in the docs' body
  params: z.looseObject({ stime: z.number().int().nonnegative() }),
});

// Withdrawn full-GC log (old docs): per agent, counts per time and the log lines.
export const fullGcEnvelope = objectEnvelope(z.looseObject({ pcode: opt(pcode), stime: opt(int), etime: opt(int), data: recordsArray }));
export const fullGcRecord = recordSchema({ oid: int32, oname: opt(str), count: z.array(z.tuple([epochMs, int])), logs: opt(z.array(str)) });
