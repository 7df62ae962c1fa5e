// Project-level snapshots: project detail (APM and server shapes), agent lists, spot values and the
// 11 text/plain scalar operations.
import { z } from "zod";
import { projectDetailColumns } from "../catalogue/dictionary/account.ts";
import { spotColumns } from "../catalogue/dictionary/project.ts";
import { shapeOf } from "../kernel/declare.ts";
import { anyTime, bool, coerce, epochMsOrZero, INVALID, int, int32, lower, num, pcode } from "../kernel/primitives.ts";
import { opt, recordSchema } from "../kernel/record.ts";
import { isNoData, objectEnvelope, recordsArray } from "./envelope.ts";

const str = z.string();

/** A server of a server-monitoring project (project detail, /open/json/sm). */
export const serverShape = {
  oid: int32,
  oname: str,
  public_ip: opt(str),
  ip: opt(str), // may be a comma-joined list ("127.0.0.1,10.128.0.1")
  os_cpuvendor: opt(str),
  os_arch: opt(str),
  os_name: opt(str),
  os_status: opt(lower),
  os_memory: opt(num), // a string of digits ("17036419072")
  cpu_cores: opt(num), // a string ("8")
  // ISO text in the new docs, an epoch (string or number) in the old docs and in /open/json/sm.
  agent_created: opt(anyTime),
  startTime: opt(anyTime),
  actTime: opt(epochMsOrZero),
  inactTime: opt(epochMsOrZero),
  isActive: opt(bool),
  okind: opt(z.union([str, z.number()])), // "" in the sample
  version: opt(str),
  tags: opt(z.array(str)),
  snapshot: opt(z.record(z.string(), z.unknown())),
};
export const serverRecord = recordSchema(serverShape);

// Project detail has two shapes (APM and server product): one record with the fields of both, each
// optional (declared with their columns in catalogue/dictionary/account.ts), and at least the
// identifying field of one of them. Written here: projectCode, which has no column (the row's pcode
// is the project asked for; the record's code is kept in extra), and the zod of `values` (the nested
// server records: the dictionary cannot import this file, which imports it). The refine is no column.
export const projectDetailRecord = recordSchema({
  projectCode: opt(pcode),
  ...shapeOf(projectDetailColumns),
  values: opt(z.looseObject({ servers: z.array(serverRecord) })),
}).refine((p) => p.project_code !== null || p.pname !== null, {
  message: "neither projectCode (APM shape) nor pname (server shape) present",
});
/** No `records`: the whole body is the one record (null when there is no data). */
export const projectDetailEnvelope = objectEnvelope(projectDetailRecord);

export const agentsEnvelope = objectEnvelope(z.looseObject({ data: recordsArray }));

export const agentsWindowEnvelope = objectEnvelope(
  z.looseObject({ stime: opt(int), etime: opt(int), timestamp: opt(int), data: recordsArray }),
);

// epoch ms, or the text forms yyyyMMddHHmmss, yyyyMMddHHmm, MMddHHmmss, MMddHHmm.
const agentListTime = z.union([z.number().int().nonnegative(), z.string().regex(/^(\d{8}|\d{10}|\d{12}|\d{14}|\d{13})$/)]);
export const agentsWindowRequest = z.strictObject({ stime: agentListTime, etime: agentListTime });

// Spot values: every value is a string ("600.0"). The record's own pcode (a number) is read, then
// replaced by the project asked for (engine/rows.ts): its column is the table's shared pcode.
export const spotRecord = recordSchema({ pcode, ...shapeOf(spotColumns) });
export const spotEnvelope = objectEnvelope(spotRecord);

// A text/plain body: `5`, `93.07`, or a quoted `"66.0"`; the client hands over the raw text. Not a
// record: the row {metric, value} is made here, its columns declared in catalogue/dictionary/project.ts.
const NUMERIC = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;
const scalarValue = coerce("a bare number", (v): number | null | typeof INVALID => {
  if (typeof v === "number") return Number.isFinite(v) ? v : INVALID;
  if (isNoData(v)) return null;
  if (typeof v !== "string") return INVALID;
  const text = v.trim().replace(/^"(.*)"$/, "$1");
  return NUMERIC.test(text) ? Number(text) : INVALID;
});

/** One captured scalar: `{metric, value, extra}`; null (no record) for an empty body. */
export function scalarEnvelope(metric: string) {
  return scalarValue.transform((value) => (value === null ? null : { metric, value, extra: {} as Record<string, unknown> }));
}
