// Operations documented by the hosted service but not part of our spec. They exist so that every
// sample in test/fixtures/api-samples has an operation and a real schema; they are not synced (no
// `stream`). Paths follow the docs (docs/api-notes.md); all use the project token.
import {
  dbParamRecord,
  dbParamsEnvelope,
  dbPoolEnvelope,
  dbPoolRecord,
  dbSqlStatRecord,
  dbSqlStatsEnvelope,
  fullGcEnvelope,
  fullGcRecord,
  infraCpuRecord,
  infraDiskRecord,
  infraObjectEnvelope,
  infraProcEnvelope,
  infraProcExplode,
  infraProcRecord,
  infraTrafficRecord,
  infraValueEnvelope,
  mxqlEnvelope,
  mxqlRequest,
  mxqlRow,
  serverCountEnvelope,
  serverRecord,
  smEnvelope,
  smServerRecord,
  smServersEnvelope,
  smStatEnvelope,
  smStatExplode,
  smStatRecord,
  yardFlushEnvelope,
  yardFlushRecord,
  yardFlushRequest,
} from "../schemas/extras.ts";
import { scalarEnvelope } from "../schemas/project.ts";
import { HOUR, type OperationDef } from "./types.ts";

const common = {
  area: "extra",
  method: "GET",
  token: "project",
  sendsPcode: true,
  format: "json",
  windowLimitMs: null,
  inSpec: false,
} as const;

// Text/plain scalars over a range; the current docs quote them ("66.0").
const rawTags: OperationDef[] = (["app_counter/tps", "app_counter/resp_time", "app_host_resource/cpu"] as const).map((tag) => ({
  ...common,
  id: `extra.raw_tag.${tag.replace("/", ".")}`,
  summary: `raw tag counter ${tag} over a range (text/plain)`,
  path: `/open/api/raw/tag/${tag}`,
  query: ["stime", "etime", "timeMerge"],
  format: "text",
  envelope: scalarEnvelope(tag.replace("/", ".")),
}));

// Server-product counts wrapped as {pname, values: "57.0"}.
const serverCounts: OperationDef[] = (["act_agent", "inact_agent", "host", "cpucore"] as const).map((name) => ({
  ...common,
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
  ...common,
  id: `extra.server.${name}`,
  summary: `server monitoring: ${name} per server name`,
  path: `/open/json/${name}`,
  envelope,
  records,
}));

const mxql: OperationDef[] = (["text", "path"] as const).map((kind) => ({
  ...common,
  id: `extra.mxql.${kind}`,
  summary: `MXQL query by ${kind} (bare array of rows)`,
  method: "POST",
  path: `/open/api/flush/mxql/${kind}`,
  body: ["stime", "etime", "mql", "limit", "pageKey", "inject", "param"],
  envelope: mxqlEnvelope,
  records: { at: null, schema: mxqlRow },
  requestSchema: mxqlRequest,
}));

export const extraOperations: OperationDef[] = [
  ...rawTags,
  {
    ...common,
    id: "extra.tag.db_pool_detail.dbconn",
    summary: "database connection pools per agent (stime+etime+timeMerge, or etime only)",
    path: "/open/api/tag/db_pool_detail/dbconn",
    query: ["stime", "etime", "timeMerge"],
    envelope: dbPoolEnvelope,
    records: { at: "dbc_total", schema: dbPoolRecord },
  },
  ...serverCounts,
  ...infra,
  {
    ...common,
    id: "extra.server.sm",
    summary: "server monitoring: servers with snapshots, max and count summaries",
    path: "/open/json/sm",
    envelope: smEnvelope,
    records: { at: "servers", schema: serverRecord },
  },
  {
    ...common,
    id: "extra.server.sm_servers",
    summary: "server monitoring: server list",
    path: "/open/json/sm_servers",
    envelope: smServersEnvelope,
    records: { at: "values", schema: smServerRecord },
  },
  {
    ...common,
    id: "extra.server.sm_stat",
    summary: "server monitoring: statistics per server and time (filter m5, oid 0 = all)",
    path: "/open/json/stat/sm_stat",
    query: ["stime", "etime", "filter", "oid"],
    windowLimitMs: HOUR,
    envelope: smStatEnvelope,
    records: { at: "servers", schema: smStatRecord, explode: smStatExplode },
  },
  {
    ...common,
    id: "extra.db.database_params",
    summary: "database parameters at two times, and the keys that differ",
    path: "/open/api/json/db/database_params",
    query: ["oid", "baseTime", "comparisonTime"],
    envelope: dbParamsEnvelope,
    records: { at: "params", schema: dbParamRecord },
  },
  {
    ...common,
    id: "extra.db.statistics_sql",
    summary: "database monitoring: top SQL statistics",
    path: "/open/api/json/db/statistics/sql",
    query: ["oids", "period", "date", "topN", "order", "category", "nameInCategory"],
    envelope: dbSqlStatsEnvelope,
    records: { at: "records", schema: dbSqlStatRecord },
  },
  ...mxql,
  {
    ...common,
    id: "extra.yard.flush",
    summary: "top-100 URLs by call count for one hour from stime (response: schema only)",
    method: "POST",
    path: "/open/api/v2/yard/flush",
    body: ["type", "path", "pcode", "params"],
    envelope: yardFlushEnvelope,
    records: { at: null, schema: yardFlushRecord },
    requestSchema: yardFlushRequest,
  },
  {
    ...common,
    id: "extra.fullgclog",
    summary: "full GC log per agent (withdrawn from the old docs)",
    path: "/open/api/json/fullgclog/{stime}/{etime}",
    envelope: fullGcEnvelope,
    records: { at: "data", schema: fullGcRecord },
  },
];
