// The project family, in one place: project detail, spot values and the 11 scalar operations
// (project token + pcode; spec "Resources and their fields": Project detail, "Spot values", "Scalar
// project operations"). For each stream: its columns (declared once: src/kernel/declare.ts), its
// table, its dictionary entry, its envelope and its operation. The agent lists are in agents.ts.
import { getTableName } from "drizzle-orm";
import { jsonb, pgTable, primaryKey, text as textColumn } from "drizzle-orm/pg-core";
import { z } from "zod";
import { columns, local, of, says, shapeOf, tableOf, text } from "../kernel/declare.ts";
import { AS_NUMBER, type DocGroup, JSON_KEPT, UNDOCUMENTED } from "../kernel/docs.ts";
import { anyTime, bool, coerce, epochMsOrZero, INVALID, int32, lower, num, pcode } from "../kernel/primitives.ts";
import { opt, recordSchema } from "../kernel/record.ts";
import { f64, i64, ts } from "../kernel/sql-types.ts";
import { dimensionColumns, docEntry, factColumns } from "../kernel/tables.ts";
import { isNoData, objectEnvelope } from "../schemas/envelope.ts";
import { anyTimeOf, PROJECT_STATUS, projectStatus } from "./account.ts";
import { defineOperation } from "./types.ts";

// ---- Columns ----

/**
 * Project detail, two shapes (APM and server products): the fields of both, each optional. Not
 * declared here: pcode (the shared column: the project asked for), the record's projectCode (no
 * column: kept in extra) and the zod of `values` (projectDetailRecord).
 */
export const projectDetailColumns = columns({
  name: text("Project name."),
  platform: text("Application product platform."),
  // Java Date text ("Tue Sep 18 08:34:27 GMT 2018"), zone word from the server.
  createTime: anyTimeOf("Creation date (documented as Java date text)."),
  lastUpdatedTime: anyTimeOf("Modification date (documented as Java date text)."),
  gatewayName: text("Data server region."),
  status: projectStatus(`${PROJECT_STATUS}.`),
  productType: text("Application product type."),
  // Server-product shape: pname instead of projectCode, plus its server list in `values`.
  pname: text(`Project name of a server product (${UNDOCUMENTED} in the spec; the docs' server sample).`),
  timezone: of(opt(num), f64, says(`Time zone of a server product (${UNDOCUMENTED}; the docs' sample has 9).`, { unit: UNDOCUMENTED })),
  regionName: text(`Region of a server product (${UNDOCUMENTED} in the spec).`),
  // The nested server records are read by projectDetailRecord (serverRecord).
  values: local(jsonb, {
    field: "values",
    text: "Server products: the server list (values.servers: oid, oname, ip, OS, CPU, memory, ...).",
    conversion: JSON_KEPT,
  }),
});

/** A spot value: sent as a string ("600.0"). */
const spot = (text: string, unit = "count") => of(opt(num), f64, says(text, { unit, conversion: AS_NUMBER }));

/** Spot values of a project; the record's own pcode (a number) is read, the column is the shared pcode. */
export const spotColumns = columns({
  act_agent: spot("Active agents."),
  inact_agent: spot("Inactive agents."),
  host: spot("Hosts."),
  cpucore: spot("Sum of CPU cores of the hosts."),
  txcount: spot("Transactions (the period they are counted over is not documented)."),
  tps: spot("Transactions per second.", "transactions per second"),
  user: spot("Active users over the last 5 minutes."),
  actx: spot("Active transactions."),
  rtime: spot("Average response time.", "ms"),
  cpu: spot("Average CPU use.", "percent"),
  threadpool_active: spot("Threads active in thread pools."),
  threadpool_queue: spot("Threads queued in thread pools."),
  dbconn_total: spot("Database connections: all."),
  dbconn_act: spot("Database connections: active."),
  dbconn_idle: spot("Database connections: idle."),
  act_method: spot("Active methods."),
  act_sql: spot("Active SQL statements."),
  act_httpc: spot("Active outbound HTTP calls."),
  act_dbc: spot("Active database connections."),
  act_socket: spot("Active sockets."),
  // Absent in the old docs.
  apdex: spot("Apdex value.", "Apdex score (0 to 1 by the Apdex definition)"),
});

/**
 * A scalar operation's answer is a bare number, not a record: its value and the metric it answers
 * (the catalogue entry's constant) are no record fields. captured_at (shared) sits between them.
 */
export const scalarColumns = columns({
  metric: local(() => textColumn().notNull(), {
    text: "The operation: act_agent, inact_agent, host, cpucore, txcount, tps, user, actx, rtime, cpu or apdex.",
    conversion: "the catalogue entry's constant, not a response field",
  }),
  value: local(f64, {
    field: "(text/plain body)",
    text: "The number the operation returned (see spot_values for each metric's meaning).",
    unit: "per metric: rtime ms, cpu percent, tps transactions per second, apdex Apdex score, the others counts",
    conversion: '5, 93.07 or "66.0", stored as a number',
  }),
});

// ---- Tables ----

/**
 * Project detail (a dimension): two shapes (APM and server products); unknown fields go to extra.
 * pcode is the shared column (the project asked for), not the record's projectCode.
 */
export const projectDetails = pgTable("project_details", {
  pcode: i64().primaryKey(),
  ...tableOf(projectDetailColumns),
  ...dimensionColumns(),
});

/** Spot values: every value arrives as a string ("600.0"); one row per capture. */
export const spotValues = pgTable(
  "spot_values",
  { pcode: i64().notNull(), captured_at: ts().notNull(), ...tableOf(spotColumns), ...factColumns() },
  (t) => [primaryKey({ columns: [t.pcode, t.captured_at] })],
);

/** The 11 text/plain scalar operations: metric = operation name (act_agent, tps, ...). */
const { metric, value } = tableOf(scalarColumns);
export const scalarValues = pgTable(
  "scalar_values",
  { pcode: i64().notNull(), metric, captured_at: ts().notNull(), value, ...factColumns() },
  (t) => [primaryKey({ columns: [t.pcode, t.metric, t.captured_at] })],
);

// ---- The dictionary's entries ----

const [detailName, detailDoc] = docEntry(
  projectDetails,
  "Project detail of each project. Two shapes: APM products (name, platform, ...) and server products (pname, " +
    "timezone, regionName, values; not in the spec, from the service's docs).",
  projectDetailColumns,
);

export const projectDocs: DocGroup = {
  title: "Project detail, spot and scalar values",
  tables: Object.fromEntries([
    [
      detailName,
      {
        ...detailDoc,
        columns: {
          ...detailDoc.columns,
          extra: {
            text: "Fields with no column, under their original key; the record's projectCode is kept here as project_code (pcode is the project asked for).",
          },
        },
      },
    ],
    docEntry(spotValues, "Current values of each project (spot values), one row per capture: one capture per sync run.", spotColumns),
    docEntry(
      scalarValues,
      "The 11 scalar operations (GET /open/api/{metric}: a bare number), one row per metric and capture; " +
        "each metric means what the spot value of the same name means.",
      scalarColumns,
    ),
  ]),
};

// ---- Records and envelopes ----

const str = z.string();

/** A server of a server-monitoring project (project detail, /open/json/sm). */
const serverShape = {
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
// optional (declared with their columns above), and at least the identifying field of one of them.
// Written here: projectCode, which has no column (the row's pcode is the project asked for; the
// record's code is kept in extra), and the zod of `values` (the nested server records). The refine
// is no column.
const projectDetailRecord = recordSchema({
  projectCode: opt(pcode),
  ...shapeOf(projectDetailColumns),
  values: opt(z.looseObject({ servers: z.array(serverRecord) })),
}).refine((p) => p.project_code !== null || p.pname !== null, {
  message: "neither projectCode (APM shape) nor pname (server shape) present",
});
/** No `records`: the whole body is the one record (null when there is no data). */
const projectDetailEnvelope = objectEnvelope(projectDetailRecord);

// Spot values: every value is a string ("600.0"). The record's own pcode (a number) is read, then
// replaced by the project asked for (engine/rows.ts): its column is the table's shared pcode.
const spotRecord = recordSchema({ pcode, ...shapeOf(spotColumns) });
const spotEnvelope = objectEnvelope(spotRecord);

// A text/plain body: `5`, `93.07`, or a quoted `"66.0"`; the client hands over the raw text. Not a
// record: the row {metric, value} is made here, its columns declared above (scalarColumns).
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

// ---- Operations ----

const common = { area: "project", method: "GET", token: "project", sendsPcode: true, format: "json", inSpec: true } as const;

export const projectOperations = [
  defineOperation({
    ...common,
    id: "project.detail",
    summary: "project detail (APM and server product shapes)",
    path: "/open/api/json/project",
    windowLimitMs: null,
    envelope: projectDetailEnvelope,
    stream: { kind: "dimension", table: getTableName(projectDetails), enabledByDefault: true },
  }),
  defineOperation({
    ...common,
    id: "project.spot",
    summary: "current spot values (all strings)",
    path: "/open/api/json/spot",
    windowLimitMs: null,
    envelope: spotEnvelope,
    stream: { kind: "snapshot", table: getTableName(spotValues), enabledByDefault: true },
  }),
] as const;

export const SCALAR_METRICS = [
  "act_agent",
  "inact_agent",
  "host",
  "cpucore",
  "txcount",
  "tps",
  "user",
  "actx",
  "rtime",
  "cpu",
  "apdex",
] as const;
export type ScalarMetric = (typeof SCALAR_METRICS)[number];

/** The 11 scalar operations: a bare text/plain number (`5`, `93.07`, or a quoted `"66.0"`). */
export const scalarOperations = SCALAR_METRICS.map((metric) =>
  defineOperation({
    ...common,
    id: `scalar.${metric}`,
    summary: `scalar ${metric}`,
    area: "scalar",
    path: `/open/api/${metric}`,
    format: "text",
    windowLimitMs: null,
    // No `records`: the body is one record {metric, value, extra}.
    envelope: scalarEnvelope(metric),
    stream: { kind: "snapshot", table: getTableName(scalarValues), enabledByDefault: true, constants: { metric } },
  }),
);
