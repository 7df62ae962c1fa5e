// Server-monitoring operations the hosted service documents but our spec does not
// (docs/api-notes.md): counts, per-server infrastructure values, the server list and statistics,
// each with its envelope and record schema (loose but meaningful, so that every docs sample is
// checked against something real). Not synced: no `stream`, no table. Project token.
import { z } from "zod";
import { bool, epochMs, int, int32, long, lower, num, pcode } from "../kernel/primitives.ts";
import { opt, recordSchema } from "../kernel/record.ts";
import { objectEnvelope, recordsArray } from "../schemas/envelope.ts";
import { serverRecord } from "./project.ts";
import { HOUR, type OperationDef } from "./types.ts";

const str = z.string();
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

// ---- Envelopes and records ----

/** /open/json/act_agent|host|cpucore|inact_agent: {pname, values: "57.0"}, one record. */
const serverCountEnvelope = objectEnvelope(recordSchema({ pname: opt(str), values: num }));

const serverProduct = { pcode: opt(pcode), pname: opt(str), timezone: opt(num), regionName: opt(str), language: opt(str) };

// infra_*: `values` is a map keyed by server NAME (no oid); it becomes `rows`, one per server.
function infraEnvelope(toRow: (oname: string, value: unknown) => Record<string, unknown>) {
  return objectEnvelope(
    z
      .looseObject({ ...serverProduct, values: z.record(z.string(), z.unknown()) })
      .transform((e) => ({ ...e, rows: Object.entries(e.values).map(([oname, value]) => toRow(oname, value)) })),
  );
}
const infraValueEnvelope = infraEnvelope((oname, value) => ({ oname, value }));
const infraObjectEnvelope = infraEnvelope((oname, value) => (isObject(value) ? { oname, ...value } : { oname, value }));
const infraProcEnvelope = infraEnvelope((oname, processes) => ({ oname, processes }));

const infraCpuRecord = recordSchema({ oname: str, value: num });
const infraTrafficRecord = recordSchema({ oname: str, value: num });
const infraDiskRecord = recordSchema({ oname: str, bps: opt(num), iops: opt(num) });
const processRecord = recordSchema({ cmd1: opt(str), cpu: opt(num), memoryBytes: opt(num), bps: opt(num) });
const infraProcRecord = recordSchema({ oname: str, processes: z.array(processRecord) });
/** One row per process: oname, cmd1, cpu, memory_bytes, bps, extra. */
function infraProcExplode(server: z.output<typeof infraProcRecord>) {
  return server.processes.map((p) => ({ oname: server.oname, ...p }));
}

// /open/json/sm: servers plus max/count summaries; max.disk.totalSpace is ~Long.MAX (beyond 2^53).
const bigCounters = z.looseObject({ totalSpace: opt(long), usedSpace: opt(long), freeSpace: opt(long), freespace: opt(long) });
const smEnvelope = objectEnvelope(
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
const smServersEnvelope = objectEnvelope(z.looseObject({ ...serverProduct, values: recordsArray }));
// Dotted keys 'os.status', 'os.name' -> os_status, os_name.
const smServerRecord = recordSchema({
  oid: int32,
  oname: opt(str),
  "os.status": opt(lower),
  "os.name": opt(str),
  isActive: opt(bool),
});

const smStatEnvelope = objectEnvelope(z.looseObject({ servers: recordsArray }));
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
const smStatRecord = recordSchema({ oid: int32, timeData: z.array(smStatPoint) });
/** One row per server and time: oid, time, cpu, memory_pused, ..., extra. */
function smStatExplode(server: z.output<typeof smStatRecord>) {
  return server.time_data.map((p) => ({ oid: server.oid, ...p }));
}

// ---- Operations ----

/** What every docs-only extra shares: a project token, no window, outside the spec. */
export const EXTRA_COMMON = {
  area: "extra",
  method: "GET",
  token: "project",
  sendsPcode: true,
  format: "json",
  windowLimitMs: null,
  inSpec: false,
} as const;

// Server-product counts wrapped as {pname, values: "57.0"}.
const serverCounts: OperationDef[] = (["act_agent", "inact_agent", "host", "cpucore"] as const).map((name) => ({
  ...EXTRA_COMMON,
  id: `extra.server.${name}`,
  summary: `server monitoring: ${name} count`,
  path: `/open/json/${name}`,
  envelope: serverCountEnvelope,
}));

const infra: OperationDef[] = [
  { name: "infra_cpu", envelope: infraValueEnvelope, records: { at: "rows", schema: infraCpuRecord } },
  { name: "infra_disk_iops", envelope: infraObjectEnvelope, records: { at: "rows", schema: infraDiskRecord } },
  { name: "infra_net_traffic", envelope: infraValueEnvelope, records: { at: "rows", schema: infraTrafficRecord } },
  { name: "infra_proc", envelope: infraProcEnvelope, records: { at: "rows", schema: infraProcRecord, explode: infraProcExplode } },
].map(({ name, envelope, records }) => ({
  ...EXTRA_COMMON,
  id: `extra.server.${name}`,
  summary: `server monitoring: ${name} per server name`,
  path: `/open/json/${name}`,
  envelope,
  records,
}));

/** Every server-monitoring operation, in the order the catalogue lists them. */
export const serverOperations: OperationDef[] = [
  ...serverCounts,
  ...infra,
  {
    ...EXTRA_COMMON,
    id: "extra.server.sm",
    summary: "server monitoring: servers with snapshots, max and count summaries",
    path: "/open/json/sm",
    envelope: smEnvelope,
    records: { at: "servers", schema: serverRecord },
  },
  {
    ...EXTRA_COMMON,
    id: "extra.server.sm_servers",
    summary: "server monitoring: server list",
    path: "/open/json/sm_servers",
    envelope: smServersEnvelope,
    records: { at: "values", schema: smServerRecord },
  },
  {
    ...EXTRA_COMMON,
    id: "extra.server.sm_stat",
    summary: "server monitoring: statistics per server and time (filter m5, oid 0 = all)",
    path: "/open/json/stat/sm_stat",
    query: ["stime", "etime", "filter", "oid"],
    windowLimitMs: HOUR,
    envelope: smStatEnvelope,
    records: { at: "servers", schema: smStatRecord, explode: smStatExplode },
  },
];
