// The metric series family, in one place (spec "Metric series operations", "Metric series results"):
// 7 metric types x 4 forms (per agent or averaged, all agents or listed ones), each exploded into
// the points of metric_points. Its columns (declared once: src/kernel/declare.ts), its table, its
// dictionary entry, its envelopes and its operations; the dictionary's group also holds the
// visitors (visitors.ts) and the call statistics (calls.ts).
//
// The records are exploded (a series into its points), so most columns are `local`: a catalogue
// constant, an element of a [time, value] pair, whose `field` names where in the response it comes
// from. The record schemas are written here: only oid and oname are the record's own fields.
import { getTableName, sql } from "drizzle-orm";
import { check, index, integer, pgTable, primaryKey, text as textColumn } from "drizzle-orm/pg-core";
import { z } from "zod";
import { columns, local, of, shapeOf, tableOf, text } from "../kernel/declare.ts";
import { type DocGroup, EPOCH_MS, HASH32 } from "../kernel/docs.ts";
import { int, int32, pcode, point } from "../kernel/primitives.ts";
import { opt, recordSchema } from "../kernel/record.ts";
import { f64, i64, ts } from "../kernel/sql-types.ts";
import { AVG_SERIES_OID, docEntry, factColumns, partitionedByMonth } from "../kernel/tables.ts";
import { objectEnvelope, recordsArray } from "../schemas/envelope.ts";
import { txCallsDoc } from "./calls.ts";
import { DAY, defineOperation, type OperationDef } from "./types.ts";
import { visitorDocs } from "./visitors.ts";

// ---- Columns ----

const CONSTANT = "the catalogue entry's constant";

/**
 * Points of the metric series (after pcode). oid and oname are the per-agent record's own fields
 * (its schema reads them from here); averaged series have no agent (oid: the sentinel 0, written
 * by the writer).
 */
export const metricPointColumns = columns({
  metric: local(() => textColumn().notNull(), {
    text: "The metric type (path segment metric_type): thread_count, thread_daemon, thread_peak_count, threadpool_active, threadpool_queue, apdex or tx_caller.",
    conversion: `${CONSTANT} (the response's type is not trusted: the docs' example says "metric_type")`,
  }),
  series_form: local(() => textColumn().notNull(), {
    text: "agent: a per-agent series (objects[].series); avg: the series averaged over the agents (objectMerge avg, no agent).",
    conversion: CONSTANT,
  }),
  oid: of(int32, () => i64().notNull(), {
    text: "Agent identifier; 0 for averaged series (a sentinel: their points belong to no agent).",
    conversion: HASH32,
  }),
  ts: local(() => ts().notNull(), {
    field: "series[i][0]",
    text: "Time of the point: the first element of a [timestamp, number] pair.",
    conversion: EPOCH_MS,
  }),
  value: local(f64, {
    field: "series[i][1]",
    text: "Value of the metric at ts (the envelope says timeMerge sum; how points are merged is not documented).",
    unit:
      "per metric: a number of threads for thread_* and threadpool_* (threadpool_* as in spot values; thread_* by name), " +
      "the Apdex score for apdex; not documented for tx_caller",
  }),
  oname: text("Agent name; null for averaged series."),
  interval: local(integer, {
    field: "interval",
    text: "Seconds between data points as the response reports them. Not filled yet: always null (the writer does not carry the envelope's interval to the points).",
    unit: "seconds",
  }),
});

// ---- Table: points, upserted by point key (re-fetching a window is harmless) ----

/** Metric series points; per-agent series (`agent`) and averaged series (`avg`, oid 0). Partitioned by month on ts. */
export const metricPoints = partitionedByMonth(
  pgTable("metric_points", { pcode: i64().notNull(), ...tableOf(metricPointColumns), ...factColumns() }, (t) => [
    primaryKey({ columns: [t.pcode, t.metric, t.series_form, t.oid, t.ts] }),
    index("metric_points_pcode_ts_idx").on(t.pcode, t.ts),
    check("metric_points_series_form_check", sql`${t.series_form} in ('agent', 'avg')`),
  ]),
  "ts",
);

// ---- The dictionary's entries ----

export const seriesDocs: DocGroup = {
  title: "Metric series, visitors and call statistics",
  tables: Object.fromEntries([
    docEntry(
      metricPoints,
      "Points of the metric series: per agent (series_form agent) and averaged over all agents (series_form avg), " +
        "one row per metric, form, agent and time. Listed-agent forms land here too when configured.",
      metricPointColumns,
    ),
    ...visitorDocs,
    txCallsDoc,
  ]),
};

// ---- Envelopes and records ----

const str = z.string();
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

const seriesBase = {
  pcode: opt(pcode),
  type: opt(str), // literally "metric_type" in the docs example: not trusted for the metric name
  stime: opt(int),
  etime: opt(int),
  interval: opt(int), // seconds between points
  timeMerge: opt(str),
};

/** Renames `from` to `to` when only `from` is present (older servers' nested `data`, `op`). */
function rename(v: unknown, pairs: readonly (readonly [string, string])[]): unknown {
  if (!isObject(v)) return v;
  const out = { ...v };
  for (const [from, to] of pairs) {
    if (out[to] === undefined && out[from] !== undefined) {
      out[to] = out[from];
      delete out[from];
    }
  }
  return out;
}

// Older servers put the agents under `data` (and each agent's points under `data` again).
const perAgentEnvelope = objectEnvelope(
  z.preprocess((v) => rename(v, [["data", "objects"]]), z.looseObject({ ...seriesBase, objects: recordsArray })),
);

// Older servers: `op` instead of `objectMerge`, `data` instead of `series`.
const averagedEnvelope = objectEnvelope(
  z.preprocess(
    (v) =>
      rename(v, [
        ["data", "series"],
        ["op", "objectMerge"],
      ]),
    z.looseObject({ ...seriesBase, objectMerge: opt(str), series: recordsArray }),
  ),
);

// One agent's series: its oid and oname (the columns' own fields) and the points it explodes into.
const agentSeriesRecord = z.preprocess(
  (v) => rename(v, [["data", "series"]]),
  recordSchema({ ...shapeOf(metricPointColumns), series: z.array(point) }),
);

/** Row of metric_points: metric, oid, oname, ts, value, extra (oid/oname null for averaged series). */
interface MetricPoint {
  metric: string;
  oid: number | null;
  oname: string | null;
  ts: Date;
  value: number | null;
  extra: Record<string, unknown>;
}

function agentSeriesExplode(metric: string) {
  return (agent: z.output<typeof agentSeriesRecord>): MetricPoint[] =>
    agent.series.map(([ts, value]) => ({ metric, oid: agent.oid, oname: agent.oname, ts, value, extra: agent.extra }));
}

function averagedPointExplode(metric: string) {
  return ([ts, value]: z.output<typeof point>): MetricPoint[] => [{ metric, oid: null, oname: null, ts, value, extra: {} }];
}

// ---- Operations ----

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
            table: getTableName(metricPoints),
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
