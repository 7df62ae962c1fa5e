// Operations documented by the hosted service but not part of our spec (docs/api-notes.md), each with
// its envelope and record schema: loose but meaningful, so that every sample in
// test/fixtures/api-samples has an operation and a real schema. They are not synced (no `stream`,
// no table). All use the project token. The server-monitoring ones are in extras-server.ts.
import { z } from "zod";
import { epochMs, int, int32, num, pcode } from "../kernel/primitives.ts";
import { opt, recordSchema } from "../kernel/record.ts";
import { bareArray, objectEnvelope, recordsArray } from "../schemas/envelope.ts";
import { EXTRA_COMMON, serverOperations } from "./extras-server.ts";
import { scalarEnvelope } from "./project.ts";
import type { OperationDef } from "./types.ts";

const str = z.string();
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

// ---- Envelopes, records and requests ----

/** /open/api/tag/db_pool_detail/dbconn: connection pools per agent at one time. */
const dbPoolEnvelope = objectEnvelope(z.looseObject({ pcode: opt(pcode), time: opt(epochMs), dbc_total: recordsArray }));
const dbPoolRecord = recordSchema({ oid: int32, oname: opt(str), databaseUrl: opt(str), active: int, idle: int, total: int });

// database_params: three lists of {key, value}; flattened to rows tagged with their list.
const param = z.looseObject({ key: str, value: z.unknown() });
const dbParamsEnvelope = objectEnvelope(
  z
    .looseObject({ unmatchedKeys: opt(z.array(param)), baseTime: opt(z.array(param)), comparisonTime: opt(z.array(param)) })
    .transform((e) => ({
      ...e,
      params: (["baseTime", "comparisonTime", "unmatchedKeys"] as const).flatMap((side) => (e[side] ?? []).map((p) => ({ side, ...p }))),
    })),
);
const dbParamRecord = recordSchema({ side: str, key: str, value: z.unknown() });

const dbSqlStatsEnvelope = objectEnvelope(
  z.looseObject({
    records: recordsArray,
    topN: opt(int),
    total: opt(int),
    retrievedStartTime: opt(epochMs),
    retrievedEndTime: opt(epochMs),
  }),
);
const dbSqlStatRecord = recordSchema({
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
const mxqlEnvelope = bareArray;
const mxqlRow = recordSchema({ time: opt(epochMs), pcode: opt(pcode), oid: opt(int32), oname: opt(str) });
const mxqlRequest = z.strictObject({
  stime: z.number().int().nonnegative(),
  etime: z.number().int().nonnegative(),
  mql: str.min(1),
  limit: z.number().int().positive().optional(),
  pageKey: str.optional(),
  inject: z.record(z.string(), str).optional(),
  param: z.record(z.string(), z.union([str, z.number()])).optional(),
});

// yard/flush: only a schema is documented ({elapsed, count, url}); array or object not stated.
const yardFlushEnvelope = objectEnvelope(z.preprocess((v) => (isObject(v) ? [v] : v), recordsArray));
const yardFlushRecord = recordSchema({ url: str, count: num, elapsed: num });
const yardFlushRequest = z.strictObject({
  type: str,
  path: str.startsWith("/"),
  pcode: z.union([str.regex(/^\d+$/), z.number().int()]), // a STRING in the docs' body
  params: z.looseObject({ stime: z.number().int().nonnegative() }),
});

// Withdrawn full-GC log (old docs): per agent, counts per time and the log lines.
const fullGcEnvelope = objectEnvelope(z.looseObject({ pcode: opt(pcode), stime: opt(int), etime: opt(int), data: recordsArray }));
const fullGcRecord = recordSchema({ oid: int32, oname: opt(str), count: z.array(z.tuple([epochMs, int])), logs: opt(z.array(str)) });

// ---- Operations ----

// Text/plain scalars over a range; the current docs quote them ("66.0").
const rawTags: OperationDef[] = (["app_counter/tps", "app_counter/resp_time", "app_host_resource/cpu"] as const).map((tag) => ({
  ...EXTRA_COMMON,
  id: `extra.raw_tag.${tag.replace("/", ".")}`,
  summary: `raw tag counter ${tag} over a range (text/plain)`,
  path: `/open/api/raw/tag/${tag}`,
  query: ["stime", "etime", "timeMerge"],
  format: "text",
  envelope: scalarEnvelope(tag.replace("/", ".")),
}));

const mxql: OperationDef[] = (["text", "path"] as const).map((kind) => ({
  ...EXTRA_COMMON,
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
    ...EXTRA_COMMON,
    id: "extra.tag.db_pool_detail.dbconn",
    summary: "database connection pools per agent (stime+etime+timeMerge, or etime only)",
    path: "/open/api/tag/db_pool_detail/dbconn",
    query: ["stime", "etime", "timeMerge"],
    envelope: dbPoolEnvelope,
    records: { at: "dbc_total", schema: dbPoolRecord },
  },
  ...serverOperations,
  {
    ...EXTRA_COMMON,
    id: "extra.db.database_params",
    summary: "database parameters at two times, and the keys that differ",
    path: "/open/api/json/db/database_params",
    query: ["oid", "baseTime", "comparisonTime"],
    envelope: dbParamsEnvelope,
    records: { at: "params", schema: dbParamRecord },
  },
  {
    ...EXTRA_COMMON,
    id: "extra.db.statistics_sql",
    summary: "database monitoring: top SQL statistics",
    path: "/open/api/json/db/statistics/sql",
    query: ["oids", "period", "date", "topN", "order", "category", "nameInCategory"],
    envelope: dbSqlStatsEnvelope,
    records: { at: "records", schema: dbSqlStatRecord },
  },
  ...mxql,
  {
    ...EXTRA_COMMON,
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
    ...EXTRA_COMMON,
    id: "extra.fullgclog",
    summary: "full GC log per agent (withdrawn from the old docs)",
    path: "/open/api/json/fullgclog/{stime}/{etime}",
    envelope: fullGcEnvelope,
    records: { at: "data", schema: fullGcRecord },
  },
];
