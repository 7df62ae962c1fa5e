// Metric series, visitors and the cross-project call statistics: each table's columns declared once
// (declare.ts), from which the tables (src/db/schema/points.ts, the tx_calls table of
// src/db/schema/stats.ts) and these dictionary entries come. Spec "Metric series results",
// "Visitor results", "Cross-project call statistics (filtered)".
//
// The records are exploded (a series into its points) or kept whole, so most columns are `local`:
// a catalogue constant, a request input, an element of a [time, value] pair or a renamed field,
// whose `field` names where in the response it comes from. The records are not row-shaped, so
// their schemas stay in src/schemas/series.ts, which reads only oid and oname from here.
import { integer, jsonb, text as textColumn } from "drizzle-orm/pg-core";
import { columns, docsOf, local, of, text } from "../../kernel/declare.ts";
import { type DocGroup, EPOCH_MS, HASH32, type TableDoc } from "../../kernel/docs.ts";
import { int32 } from "../../kernel/primitives.ts";
import { f64, i64, ts } from "../../kernel/sql-types.ts";

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

/** Visitor points (after pcode): one [timestamp, count] pair each. */
export const visitorColumns = columns({
  granularity: local(() => textColumn().notNull(), {
    text: "5m, h or d: the operation the point came from (visitor_5m, visitor_h, visitor_d).",
    conversion: CONSTANT,
  }),
  ts: local(() => ts().notNull(), {
    field: "data[i][0]",
    text: "Time of the point: the first element of a [timestamp, count] pair (alignment to the bucket is not documented).",
    conversion: EPOCH_MS,
  }),
  count: local(i64, {
    field: "data[i][1]",
    text: "Visitors: users who produced a transaction within the last 5 minutes (the spec's definition); how hourly and daily points merge them is not documented.",
    unit: "users",
  }),
});

/** One month of unique users (after pcode); stime and etime are renamed month_start and month_end. */
export const visitorMonthColumns = columns({
  month_start: local(() => ts().notNull(), { field: "data[].stime", text: "Start of the month.", conversion: EPOCH_MS }),
  month_end: local(ts, { field: "data[].etime", text: "End of the month.", conversion: EPOCH_MS }),
  sdate: local(textColumn, {
    field: "data[].sdate",
    text: "Start of the month as the response writes it (string form of stime).",
    conversion: 'Java date text ("Sat Sep 01 00:00:00 GMT 2018") parsed, stored as ISO 8601 UTC text (2018-09-01T00:00:00.000Z)',
  }),
  edate: local(textColumn, {
    field: "data[].edate",
    text: "End of the month as the response writes it (string form of etime).",
    conversion: "Java date text parsed, stored as ISO 8601 UTC text",
  }),
  mau: local(i64, { field: "data[].mau", text: "Unique users in the month.", unit: "users" }),
});

/** tx_caller / tx_domain filtered: the response shape is not documented, so each window's body is kept whole. */
export const txCallColumns = columns({
  metric_type: local(() => textColumn().notNull(), { text: "tx_caller or tx_domain (path segment metric_type).", conversion: CONSTANT })
    .key,
  filter_key: local(() => textColumn().notNull(), {
    text: "The filter the window was asked with (path filterkey): caller_pcode, caller_spec (version), caller_url, spec (version) or url.",
    conversion: "the request's input",
  }).key,
  filter_value: local(() => textColumn().notNull(), {
    text: "The value the filter matched (path filterval), as configured.",
    conversion: "the request's input before the base64 encoding caller_url and url get",
  }).key,
  payload: local(() => jsonb().notNull(), {
    field: "(body)",
    text: "The whole response body of the window.",
    conversion: "kept as JSON (shape not documented)",
  }),
});

const tables: Record<string, TableDoc> = {
  metric_points: {
    description:
      "Points of the metric series: per agent (series_form agent) and averaged over all agents (series_form avg), " +
      "one row per metric, form, agent and time. Listed-agent forms land here too when configured.",
    columns: docsOf(metricPointColumns),
  },
  visitors: {
    description: "Visitor counts per 5 minutes, hour and day (granularity 5m, h, d).",
    columns: docsOf(visitorColumns),
  },
  visitors_monthly: {
    description: "Unique users per month (visitor_m); one request re-reads a year, since a month's count changes until it ends.",
    columns: docsOf(visitorMonthColumns),
  },
  tx_calls: {
    description:
      "Cross-project call statistics filtered by filterkey/filterval (tx_caller: transaction calls between projects; " +
      "tx_domain: transaction domain calls). The response shape is not documented: each window's answer is kept whole.",
    columns: docsOf(txCallColumns),
  },
};

export const seriesDocs: DocGroup = { title: "Metric series, visitors and call statistics", tables };
