// Metric series (7 types x 4 forms), visitors, and filtered cross-project call statistics.

import { point } from "../kernel/primitives.ts";
import { AVG_SERIES_OID } from "../kernel/tables.ts";
import {
  agentSeriesExplode,
  agentSeriesRecord,
  averagedEnvelope,
  averagedPointExplode,
  callsEnvelope,
  perAgentEnvelope,
  visitorExplode,
  visitorMonthExplode,
  visitorMonthRecord,
  visitorPoint,
  visitorsEnvelope,
  visitorsMonthlyEnvelope,
} from "../schemas/series.ts";
import { DAY, defineOperation, type OperationDef } from "./types.ts";

export const METRIC_TYPES = [
  "thread_count",
  "thread_daemon",
  "thread_peak_count",
  "threadpool_active",
  "threadpool_queue",
  "apdex",
  "tx_caller",
] as const;
export type MetricType = (typeof METRIC_TYPES)[number];

const seriesCommon = {
  area: "series",
  method: "GET",
  token: "project",
  altToken: "account",
  sendsPcode: true,
  format: "json",
  inSpec: true,
} as const;

const FORMS = [
  { suffix: "", path: "", averaged: false, listed: false },
  { suffix: ".avg", path: "/avg", averaged: true, listed: false },
  { suffix: ".oids", path: "/{oids}", averaged: false, listed: true },
  { suffix: ".avg.oids", path: "/avg/{oids}", averaged: true, listed: true },
] as const;

function seriesOperation(metric: MetricType, form: (typeof FORMS)[number]): OperationDef {
  return defineOperation({
    ...seriesCommon,
    id: `series.${metric}${form.suffix}`,
    summary: `${metric} series, ${form.averaged ? "averaged" : "per agent"}${form.listed ? ", listed agents" : ""}`,
    path: `/open/api/json/${metric}/{stime}/{etime}${form.path}`,
    windowLimitMs: DAY,
    // Per-agent: objects[].series; averaged: series. Older servers nest both under `data` (the
    // envelope renames it); each agent or point becomes metric_points rows.
    envelope: form.averaged ? averagedEnvelope : perAgentEnvelope,
    records: form.averaged
      ? { at: "series", schema: point, explode: averagedPointExplode(metric) }
      : { at: "objects", schema: agentSeriesRecord, explode: agentSeriesExplode(metric) },
    // The listed-agent forms need oids from config (`inputs`); the full forms cover the same data.
    // An average over a chosen agent list is not a stream: metric_points has no key for the list,
    // so it would overwrite the average over all agents.
    ...(form.averaged && form.listed
      ? {}
      : {
          stream: {
            kind: "points",
            table: "metric_points",
            enabledByDefault: !form.listed,
            // One request per day per series; re-reading the current day is cheap and harmless.
            grainMs: DAY,
            constants: { metric, series_form: form.averaged ? "avg" : "agent" },
            // Averaged series have no agent: the documented sentinel oid 0 keeps the key non-null.
            derive: (row: Readonly<Record<string, unknown>>) => ({ oid: row.oid ?? AVG_SERIES_OID }),
          },
        }),
  });
}

export const seriesOperations: OperationDef[] = METRIC_TYPES.flatMap((metric) =>
  // tx_caller has no averaged forms (spec "Metric series operations").
  FORMS.filter((form) => !(metric === "tx_caller" && form.averaged)).map((form) => seriesOperation(metric, form)),
);

const VISITORS = [
  { g: "5m", limit: DAY, grain: DAY, table: "visitors" },
  { g: "h", limit: DAY, grain: DAY, table: "visitors" },
  { g: "d", limit: 31 * DAY, grain: 7 * DAY, table: "visitors" },
  // Monthly unique users change until the month ends: one request re-reads the whole year.
  { g: "m", limit: 365 * DAY, grain: 365 * DAY, table: "visitors_monthly" },
] as const;

export const visitorOperations: OperationDef[] = VISITORS.map(({ g, limit, grain, table }) =>
  defineOperation({
    id: `visitors.${g}`,
    summary: `visitors per ${g}`,
    area: "visitors",
    method: "GET",
    path: `/open/api/json/visitor_${g}/{stime}/{etime}`,
    token: "project",
    sendsPcode: true,
    format: "json",
    windowLimitMs: limit,
    inSpec: true,
    envelope: g === "m" ? visitorsMonthlyEnvelope : visitorsEnvelope,
    records:
      g === "m"
        ? { at: "data", schema: visitorMonthRecord, explode: visitorMonthExplode }
        : { at: "data", schema: visitorPoint, explode: visitorExplode(g) },
    stream: {
      kind: "points",
      table,
      enabledByDefault: true,
      grainMs: grain,
      lookbackMs: grain,
      ...(g === "m" ? {} : { constants: { granularity: g } }),
    },
  }),
);

/** filterkey values whose filterval is base64-encoded (spec "Cross-project call statistics"). */
export const BASE64_FILTER_KEYS = new Set(["caller_url", "url"]);

export const callOperations: OperationDef[] = (["tx_caller", "tx_domain"] as const).map((metric) =>
  defineOperation({
    id: `calls.${metric}`,
    summary: `${metric} call statistics filtered by filterkey/filterval (response shape undocumented: kept as JSON)`,
    area: "calls",
    method: "GET",
    path: `/open/api/json/${metric}/{stime}/{etime}/filter/{filterkey}/{filterval}`,
    encode: {
      filterval: (value, params) =>
        BASE64_FILTER_KEYS.has(String(params.filterkey)) ? Buffer.from(value, "utf8").toString("base64") : value,
    },
    token: "project",
    altToken: "account",
    sendsPcode: true,
    format: "json",
    windowLimitMs: DAY,
    inSpec: true,
    // Response shape undocumented: no `records`, the body is kept as one JSON payload record.
    envelope: callsEnvelope(metric),
    // One partition per configured filter (`inputs`: filterkey + filterval).
    stream: {
      kind: "aggregate",
      table: "tx_calls",
      enabledByDefault: false,
      paramColumns: { filterkey: "filter_key", filterval: "filter_value" },
    },
  }),
);
